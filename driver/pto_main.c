// SPDX-License-Identifier: GPL-2.0
/*
 * pto.ko: the "pto" class, software devices created at load time
 * (nr_devices) and at run time through /sys/class/pto/new_device and
 * del_device (the netdevsim pattern), and their sysfs attributes.
 *
 * Adding and removing devices is serialised by pto_dev_lock, held from
 * the start to the end of each, as netdevsim's bus lock is: an id stays
 * taken until its device's character device is gone, so a new device
 * never lands on a dev_t still mapped to a dying one; and module exit
 * removes the class attributes (waiting for writers inside them) before
 * it removes the devices, so no device appears after that.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "pto_compat.h"
#include "pto_drv.h"

static unsigned int nr_devices = 1;
module_param(nr_devices, uint, 0444);
MODULE_PARM_DESC(nr_devices, "Software devices created at load time");

static unsigned int cube_cores = 2;
module_param(cube_cores, uint, 0444);
MODULE_PARM_DESC(cube_cores, "Cube cores per device created at load time");

static unsigned int vector_cores = 2;
module_param(vector_cores, uint, 0444);
MODULE_PARM_DESC(vector_cores, "Vector cores per device at load time");

static unsigned int aicpu_cores = 1;
module_param(aicpu_cores, uint, 0444);
MODULE_PARM_DESC(aicpu_cores, "AICPU cores per device at load time");

static unsigned int accel_cores = 1;
module_param(accel_cores, uint, 0444);
MODULE_PARM_DESC(accel_cores, "Accelerators per device at load time");

unsigned int pto_task_timeout_ms = 5000;
module_param_named(task_timeout_ms, pto_task_timeout_ms, uint, 0644);
MODULE_PARM_DESC(task_timeout_ms,
		 "A task running longer fails with -ETIMEDOUT (0: never)");

unsigned long pto_max_heap_size = 256UL << 20;
module_param_named(max_heap_size, pto_max_heap_size, ulong, 0644);
MODULE_PARM_DESC(max_heap_size, "Largest heap a context may set up (bytes)");

unsigned int pto_max_task_window = 65536;
module_param_named(max_task_window, pto_max_task_window, uint, 0644);
MODULE_PARM_DESC(max_task_window, "Largest task window of a context");

unsigned int pto_max_dep_pool = 1U << 20;
module_param_named(max_dep_pool, pto_max_dep_pool, uint, 0644);
MODULE_PARM_DESC(max_dep_pool, "Largest dependency pool of a context");

static bool unbound_workers;
module_param(unbound_workers, bool, 0444);
MODULE_PARM_DESC(unbound_workers,
		 "Run cores on any CPU (default: on the CPU that kicked them)");

unsigned long pto_max_task_macs = 1UL << 28;
module_param_named(max_task_macs, pto_max_task_macs, ulong, 0644);
MODULE_PARM_DESC(max_task_macs, "Largest M*N*K of one matrix task");

unsigned long pto_max_section_cost = 1UL << 18;
module_param_named(max_section_cost, pto_max_section_cost, ulong, 0644);
MODULE_PARM_DESC(max_section_cost,
		 "Largest indivisible piece of an op (multiply-adds), run with preemption off");

unsigned int pto_max_wait_ms = 10000;
module_param_named(max_wait_ms, pto_max_wait_ms, uint, 0644);
MODULE_PARM_DESC(max_wait_ms,
		 "A parked io_uring WAIT completes with 0 after at most this long");

unsigned int pto_max_uring_waits = 256;
module_param_named(max_uring_waits, pto_max_uring_waits, uint, 0644);
MODULE_PARM_DESC(max_uring_waits, "io_uring WAITs one context may park");

unsigned long pto_max_memory;
module_param_named(max_memory, pto_max_memory, ulong, 0644);
MODULE_PARM_DESC(max_memory,
		 "Bytes all contexts may allocate (0: half of RAM)");
EXPORT_SYMBOL_IF_KUNIT(pto_max_memory);

unsigned long pto_max_user_memory;
module_param_named(max_user_memory, pto_max_user_memory, ulong, 0644);
MODULE_PARM_DESC(max_user_memory,
		 "Bytes one user's contexts may allocate (0: a quarter of RAM)");
EXPORT_SYMBOL_IF_KUNIT(pto_max_user_memory);

unsigned int pto_max_user_contexts = 64;
module_param_named(max_user_contexts, pto_max_user_contexts, uint, 0644);
MODULE_PARM_DESC(max_user_contexts, "Contexts one user may have open");
EXPORT_SYMBOL_IF_KUNIT(pto_max_user_contexts);

struct workqueue_struct *pto_wq;
static struct class *pto_class;
static dev_t pto_devt;
/* serialises device addition and removal, start to end, and module exit */
static DEFINE_MUTEX(pto_dev_lock);
static bool pto_enabled;		/* under pto_dev_lock */
static DEFINE_MUTEX(pto_list_lock);	/* pto_devices */
static LIST_HEAD(pto_devices);

static void pto_device_release(struct kref *ref)
{
	kfree(container_of(ref, struct pto_device, ref));
}

/**
 * pto_device_put() - drop a reference to a device
 * @pdev: the device
 *
 * Frees it with the last reference, which may be an open context's long
 * after the device was removed: contexts keep their device's memory valid.
 */
void pto_device_put(struct pto_device *pdev)
{
	kref_put(&pdev->ref, pto_device_release);
}

/**
 * pto_device_get_by_minor() - find a live device for open()
 * @minor: the minor number of the opened node
 *
 * Context: takes the device list lock.
 * Return: the device with a reference the caller must put, or NULL when
 * no such device exists or it is being removed.
 */
struct pto_device *pto_device_get_by_minor(unsigned int minor)
{
	struct pto_device *pdev, *found = NULL;

	mutex_lock(&pto_list_lock);
	list_for_each_entry(pdev, &pto_devices, node) {
		if (pdev->id == minor && !READ_ONCE(pdev->dead)) {
			kref_get(&pdev->ref);
			found = pdev;
			break;
		}
	}
	mutex_unlock(&pto_list_lock);
	return found;
}

/**
 * pto_device_note_section() - record a section run with preemption off
 * @pdev: the device
 * @ns: how long it ran
 *
 * Keeps the longest, for sysfs max_section_ns.
 */
void pto_device_note_section(struct pto_device *pdev, u64 ns)
{
	s64 old = atomic64_read(&pdev->max_section_ns);

	while ((s64)ns > old) {
		s64 seen = atomic64_cmpxchg(&pdev->max_section_ns, old, ns);

		if (seen == old)
			break;
		old = seen;
	}
}

/* ---- per-device sysfs ------------------------------------------------------ */

static ssize_t cores_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u %u %u %u\n", pdev->cores[0], pdev->cores[1],
			  pdev->cores[2], pdev->cores[3]);
}
static DEVICE_ATTR_RO(cores);

static ssize_t contexts_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(pdev->nr_contexts));
}
static DEVICE_ATTR_RO(contexts);

static ssize_t tasks_done_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", (s64)atomic64_read(&pdev->tasks_done));
}
static DEVICE_ATTR_RO(tasks_done);

static ssize_t tasks_failed_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&pdev->tasks_failed));
}
static DEVICE_ATTR_RO(tasks_failed);

static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld %lld %lld %lld\n",
			  (s64)atomic64_read(&pdev->busy_ns[0]),
			  (s64)atomic64_read(&pdev->busy_ns[1]),
			  (s64)atomic64_read(&pdev->busy_ns[2]),
			  (s64)atomic64_read(&pdev->busy_ns[3]));
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t max_section_ns_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&pdev->max_section_ns));
}

/* writing 0 starts a new measurement */
static ssize_t max_section_ns_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct pto_device *pdev = dev_get_drvdata(dev);
	u64 v;
	int ret;

	ret = kstrtou64(buf, 0, &v);
	if (ret)
		return ret;
	if (v)
		return -EINVAL;
	atomic64_set(&pdev->max_section_ns, 0);
	return count;
}
static DEVICE_ATTR_RW(max_section_ns);

static ssize_t mem_used_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct pto_device *pdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", (s64)atomic64_read(&pdev->mem_bytes));
}
static DEVICE_ATTR_RO(mem_used);

/* max_memory in effect: every device's contexts share it */
static ssize_t mem_total_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  pto_mem_limit(READ_ONCE(pto_max_memory), 1));
}
static DEVICE_ATTR_RO(mem_total);

static struct attribute *pto_dev_attrs[] = {
	&dev_attr_cores.attr,
	&dev_attr_contexts.attr,
	&dev_attr_tasks_done.attr,
	&dev_attr_tasks_failed.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_max_section_ns.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_mem_total.attr,
	NULL,
};
ATTRIBUTE_GROUPS(pto_dev);

/* ---- device lifetime ------------------------------------------------------- */

static int pto_device_add(u32 id, const u32 *cores)
{
	struct pto_device *pdev, *it;
	u32 total = 0;
	dev_t devt;
	int ret, t;

	if (id >= PTO_MAX_DEVICES)
		return -EINVAL;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		if (cores[t] > PTO_MAX_CORES_PER_TYPE)
			return -EINVAL;
		total += cores[t];
	}
	if (!total)
		return -EINVAL;

	pdev = kzalloc(sizeof(*pdev), GFP_KERNEL);
	if (!pdev)
		return -ENOMEM;
	kref_init(&pdev->ref);
	mutex_init(&pdev->lock);
	INIT_LIST_HEAD(&pdev->ctxs);
	pdev->id = id;
	pdev->ops = &pto_vdev_ops;
	memcpy(pdev->cores, cores, sizeof(pdev->cores));
	pdev->num_cores = total;
	devt = MKDEV(MAJOR(pto_devt), id);

	mutex_lock(&pto_dev_lock);
	if (!pto_enabled) {
		ret = -ENODEV;
		goto err_unlock;
	}
	/* a device being removed is on the list until it is gone */
	list_for_each_entry(it, &pto_devices, node) {
		if (it->id == id) {
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	pdev->cdev = cdev_alloc();
	if (!pdev->cdev) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	pdev->cdev->owner = THIS_MODULE;
	pdev->cdev->ops = &pto_fops;
	ret = cdev_add(pdev->cdev, devt, 1);
	if (ret) {
		/* not added, so nothing to unmap: drop cdev_alloc()'s ref */
		kobject_put(&pdev->cdev->kobj);
		goto err_unlock;
	}
	pdev->dev = device_create_with_groups(pto_class, NULL, devt, pdev,
					      pto_dev_groups, "pto%u", id);
	if (IS_ERR(pdev->dev)) {
		ret = PTR_ERR(pdev->dev);
		goto err_cdev;
	}
	mutex_lock(&pto_list_lock);
	list_add_tail(&pdev->node, &pto_devices);
	mutex_unlock(&pto_list_lock);
	mutex_unlock(&pto_dev_lock);
	return 0;

err_cdev:
	cdev_del(pdev->cdev);
err_unlock:
	mutex_unlock(&pto_dev_lock);
	kfree(pdev);
	return ret;
}

/*
 * Remove a device, with pto_dev_lock held; open contexts stay valid memory
 * but every call on them fails with -ENODEV, their cores stop and their
 * waiters wake.  Contexts are stopped without pdev->lock, each held by a
 * reference, so opens and releases of other contexts never wait for a
 * core to stop.  The id is free again only once the cdev is gone.
 */
static void pto_device_remove(struct pto_device *pdev)
{
	struct pto_ctx *ctx, *tmp;
	LIST_HEAD(kill);

	lockdep_assert_held(&pto_dev_lock);
	mutex_lock(&pdev->lock);
	WRITE_ONCE(pdev->dead, true);
	list_for_each_entry(ctx, &pdev->ctxs, node) {
		kref_get(&ctx->ref);
		list_add_tail(&ctx->kill_node, &kill);
	}
	mutex_unlock(&pdev->lock);

	list_for_each_entry_safe(ctx, tmp, &kill, kill_node) {
		pto_ctx_shutdown(ctx, -ENODEV);
		list_del_init(&ctx->kill_node);
		pto_ctx_put(ctx);
	}

	device_destroy(pto_class, MKDEV(MAJOR(pto_devt), pdev->id));
	cdev_del(pdev->cdev);

	mutex_lock(&pto_list_lock);
	list_del(&pdev->node);
	mutex_unlock(&pto_list_lock);
	pto_device_put(pdev);
}

static int pto_device_del(u32 id)
{
	struct pto_device *pdev, *found = NULL;

	mutex_lock(&pto_dev_lock);
	list_for_each_entry(pdev, &pto_devices, node) {
		if (pdev->id == id) {
			found = pdev;
			break;
		}
	}
	if (found)
		pto_device_remove(found);
	mutex_unlock(&pto_dev_lock);
	return found ? 0 : -ENOENT;
}

/* ---- class attributes: new_device, del_device ------------------------------ */

static ssize_t
new_device_store(PTO_CLASS_ATTR_CONST struct class *class,
		 PTO_CLASS_ATTR_CONST struct class_attribute *attr,
		 const char *buf, size_t count)
{
	u32 id, c[PTO_UAPI_NUM_WORKER_TYPES] = {
		cube_cores, vector_cores, aicpu_cores, accel_cores,
	};
	int n, ret;

	n = sscanf(buf, "%u %u %u %u %u", &id, &c[0], &c[1], &c[2], &c[3]);
	if (n != 1 && n != 5)
		return -EINVAL;
	ret = pto_device_add(id, c);
	return ret ? ret : count;
}

static ssize_t
del_device_store(PTO_CLASS_ATTR_CONST struct class *class,
		 PTO_CLASS_ATTR_CONST struct class_attribute *attr,
		 const char *buf, size_t count)
{
	u32 id;
	int ret;

	ret = kstrtou32(buf, 0, &id);
	if (ret)
		return ret;
	ret = pto_device_del(id);
	return ret ? ret : count;
}

static CLASS_ATTR_WO(new_device);
static CLASS_ATTR_WO(del_device);

static char *pto_devnode(PTO_DEVNODE_CONST struct device *dev,
			 umode_t *mode)
{
	if (mode)
		*mode = 0660;
	return NULL;
}

/* With pto_dev_lock held: remove every device, refuse new ones. */
static void pto_remove_all(void)
{
	struct pto_device *pdev;

	lockdep_assert_held(&pto_dev_lock);
	pto_enabled = false;
	while ((pdev = list_first_entry_or_null(&pto_devices,
						struct pto_device, node)))
		pto_device_remove(pdev);
}

static int __init pto_init(void)
{
	u32 c[PTO_UAPI_NUM_WORKER_TYPES] = {
		cube_cores, vector_cores, aicpu_cores, accel_cores,
	};
	unsigned int i;
	int ret;

	/* the uapi's layouts, as libpto and the simulator see them */
	BUILD_BUG_ON(sizeof(struct pto_task_desc) != 256);
	BUILD_BUG_ON(sizeof(struct pto_dep_entry) != 16);
	BUILD_BUG_ON(sizeof(struct pto_release_entry) != 16);
	BUILD_BUG_ON(sizeof(struct pto_core_regs) != 256);
	BUILD_BUG_ON(sizeof(struct pto_completion) != 64);
	BUILD_BUG_ON(sizeof(struct pto_window_header) != 9 * 64);
	BUILD_BUG_ON(sizeof(struct pto_cring_header) != 3 * 64);
	BUILD_BUG_ON(sizeof(struct pto_info) != 104);
	BUILD_BUG_ON(offsetof(struct pto_info, max_wait_ms) != 72);
	BUILD_BUG_ON(sizeof(struct pto_ring_geometry) != 48);
	BUILD_BUG_ON(sizeof(struct pto_setup) != 376);
	BUILD_BUG_ON(sizeof(struct pto_wait) != 32);

	if (nr_devices > PTO_MAX_DEVICES)
		return -EINVAL;
	/*
	 * Bound: a KICKed core runs on the CPU that kicked it, right after
	 * the host goes to sleep; no cross-CPU wake-up, which measured 20 us
	 * against 0.1-3 ms round trips under TCG.  Unbound spreads one
	 * context's cores over CPUs instead.  Work items never sleep (see
	 * pto_vdev.c), so a bound pool needs a worker or two.  Freezable:
	 * no core runs while the system is suspended.
	 */
	pto_wq = alloc_workqueue("pto", WQ_FREEZABLE | (unbound_workers ?
				 WQ_UNBOUND : WQ_HIGHPRI), 0);
	if (!pto_wq)
		return -ENOMEM;
	ret = alloc_chrdev_region(&pto_devt, 0, PTO_MAX_DEVICES, "pto");
	if (ret)
		goto err_wq;
	pto_class = pto_class_create("pto");
	if (IS_ERR(pto_class)) {
		ret = PTR_ERR(pto_class);
		goto err_region;
	}
	pto_class->devnode = pto_devnode;
	mutex_lock(&pto_dev_lock);
	pto_enabled = true;
	mutex_unlock(&pto_dev_lock);
	for (i = 0; i < nr_devices; i++) {
		ret = pto_device_add(i, c);
		if (ret)
			goto err_devices;
	}
	ret = class_create_file(pto_class, &class_attr_new_device);
	if (ret)
		goto err_devices;
	ret = class_create_file(pto_class, &class_attr_del_device);
	if (ret)
		goto err_new_device;
	return 0;

err_new_device:
	class_remove_file(pto_class, &class_attr_new_device);
err_devices:
	mutex_lock(&pto_dev_lock);
	pto_remove_all();
	mutex_unlock(&pto_dev_lock);
	class_destroy(pto_class);
err_region:
	unregister_chrdev_region(pto_devt, PTO_MAX_DEVICES);
err_wq:
	destroy_workqueue(pto_wq);
	return ret;
}

static void __exit pto_exit(void)
{
	/* waits for writers inside them; none can add a device after this */
	class_remove_file(pto_class, &class_attr_del_device);
	class_remove_file(pto_class, &class_attr_new_device);
	mutex_lock(&pto_dev_lock);
	pto_remove_all();
	mutex_unlock(&pto_dev_lock);
	class_destroy(pto_class);
	unregister_chrdev_region(pto_devt, PTO_MAX_DEVICES);
	destroy_workqueue(pto_wq);
}

module_init(pto_init);
module_exit(pto_exit);
MODULE_DESCRIPTION("PTO task-graph accelerator: software device and uapi");
MODULE_AUTHOR("PTO project");
MODULE_LICENSE("GPL");
MODULE_VERSION(PTO_VERSION);

// SPDX-License-Identifier: GPL-2.0
/*
 * pto.ko: the "pto" class, software devices created at load time
 * (nr_devices) and at run time through /sys/class/pto/new_device and
 * del_device (the netdevsim pattern), and their sysfs attributes.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>

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
MODULE_PARM_DESC(max_task_macs,
		 "Largest M*N*K of one matrix task (runs with preemption off)");

struct workqueue_struct *pto_wq;
static struct class *pto_class;
static dev_t pto_devt;
static DEFINE_MUTEX(pto_lock);		/* pto_devices */
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

	mutex_lock(&pto_lock);
	list_for_each_entry(pdev, &pto_devices, node) {
		if (pdev->id == minor && !pdev->dead) {
			kref_get(&pdev->ref);
			found = pdev;
			break;
		}
	}
	mutex_unlock(&pto_lock);
	return found;
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

static struct attribute *pto_dev_attrs[] = {
	&dev_attr_cores.attr,
	&dev_attr_contexts.attr,
	&dev_attr_tasks_done.attr,
	&dev_attr_tasks_failed.attr,
	&dev_attr_busy_ns.attr,
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

	mutex_lock(&pto_lock);
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
	list_add_tail(&pdev->node, &pto_devices);
	mutex_unlock(&pto_lock);
	return 0;

err_cdev:
	cdev_del(pdev->cdev);
err_unlock:
	mutex_unlock(&pto_lock);
	kfree(pdev);
	return ret;
}

/*
 * Remove a device; open contexts stay valid memory but every call on them
 * fails with -ENODEV, their cores stop and their waiters wake.
 */
static void pto_device_remove(struct pto_device *pdev)
{
	struct pto_ctx *ctx;

	mutex_lock(&pdev->lock);
	WRITE_ONCE(pdev->dead, true);
	list_for_each_entry(ctx, &pdev->ctxs, node)
		pto_ctx_shutdown(ctx, -ENODEV);
	mutex_unlock(&pdev->lock);

	device_destroy(pto_class, MKDEV(MAJOR(pto_devt), pdev->id));
	cdev_del(pdev->cdev);
	pto_device_put(pdev);
}

static int pto_device_del(u32 id)
{
	struct pto_device *pdev, *found = NULL;

	mutex_lock(&pto_lock);
	list_for_each_entry(pdev, &pto_devices, node) {
		if (pdev->id == id) {
			found = pdev;
			list_del(&pdev->node);
			break;
		}
	}
	mutex_unlock(&pto_lock);
	if (!found)
		return -ENOENT;
	pto_device_remove(found);
	return 0;
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

static void pto_remove_all(void)
{
	struct pto_device *pdev;

	for (;;) {
		mutex_lock(&pto_lock);
		pdev = list_first_entry_or_null(&pto_devices,
						struct pto_device, node);
		if (pdev)
			list_del(&pdev->node);
		mutex_unlock(&pto_lock);
		if (!pdev)
			return;
		pto_device_remove(pdev);
	}
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
	BUILD_BUG_ON(sizeof(struct pto_core_regs) != 128);
	BUILD_BUG_ON(sizeof(struct pto_completion) != 64);
	BUILD_BUG_ON(sizeof(struct pto_window_header) != 9 * 64);
	BUILD_BUG_ON(sizeof(struct pto_cring_header) != 3 * 64);
	BUILD_BUG_ON(sizeof(struct pto_info) != 104);
	BUILD_BUG_ON(sizeof(struct pto_ring_geometry) != 48);
	BUILD_BUG_ON(sizeof(struct pto_setup) != 376);
	BUILD_BUG_ON(sizeof(struct pto_wait) != 32);

	if (nr_devices > PTO_MAX_DEVICES)
		return -EINVAL;
	/*
	 * Bound: a KICKed core runs on the CPU that kicked it, right after
	 * the host goes to sleep; no cross-CPU wake-up, which measured 20 us
	 * against 0.1-3 ms round trips under TCG.  Unbound spreads one
	 * context's cores over CPUs instead.
	 */
	pto_wq = alloc_workqueue("pto", unbound_workers ? WQ_UNBOUND :
				 WQ_HIGHPRI, 0);
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
	ret = class_create_file(pto_class, &class_attr_new_device);
	if (!ret)
		ret = class_create_file(pto_class, &class_attr_del_device);
	if (ret)
		goto err_class;
	for (i = 0; i < nr_devices; i++) {
		ret = pto_device_add(i, c);
		if (ret)
			goto err_devices;
	}
	return 0;

err_devices:
	pto_remove_all();
err_class:
	class_destroy(pto_class);
err_region:
	unregister_chrdev_region(pto_devt, PTO_MAX_DEVICES);
err_wq:
	destroy_workqueue(pto_wq);
	return ret;
}

static void __exit pto_exit(void)
{
	pto_remove_all();
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

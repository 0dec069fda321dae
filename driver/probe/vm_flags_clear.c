// SPDX-License-Identifier: GPL-2.0
/* Compile probe: vma->vm_flags is read-only, use vm_flags_clear(). */
#include <linux/mm.h>

void pto_probe(struct vm_area_struct *v);
void pto_probe(struct vm_area_struct *v)
{
	vm_flags_clear(v, VM_MAYEXEC);
}

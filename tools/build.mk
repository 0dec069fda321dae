# SPDX-License-Identifier: MIT
# User-facing tools, one directory each.
-include tools/ptorun/build.mk
-include tools/ptobench/build.mk
-include tools/ptotop/build.mk

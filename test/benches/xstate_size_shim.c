/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * LD_PRELOAD shim for test/test_uml_fpu.py: makes this host look, to one program's ptrace of the x86
 * extended FPU state (NT_X86_XSTATE), like a host whose XSAVE area is HOSTLINK_XSTATE_SIZE bytes (an
 * AMX Xeon: 11008), however small the real one is. It applies the rules of Linux's x86 ptrace
 * (kernel/ptrace.c ptrace_regset, arch/x86/kernel/fpu/regset.c xstateregs_set):
 *
 * - PTRACE_GETREGSET fills at most the area's size and sets iov_len to what it filled;
 * - PTRACE_SETREGSET cuts iov_len to the area's size, then takes only exactly the whole area:
 *   anything shorter fails with EFAULT.
 *
 * The bytes past the real area read as zero and are dropped when written: the real state, its XSAVE
 * header included, is what the real kernel saves and restores.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PROBE_SIZE (64 * 1024)

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static long real_ptrace(int request, pid_t pid, void *addr, void *data)
{
	static ptrace_fn real;

	if (!real)
		real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	return real(request, pid, addr, data);
}

static size_t emulated_size(void)
{
	const char *size = getenv("HOSTLINK_XSTATE_SIZE");

	return size ? strtoul(size, NULL, 0) : 0;
}

long ptrace(enum __ptrace_request request, ...)
{
	static unsigned char state[PROBE_SIZE];
	struct iovec *iov, real_iov = {state, sizeof(state)};
	size_t size = emulated_size(), len;
	pid_t pid;
	void *addr, *data;
	va_list ap;

	va_start(ap, request);
	pid = va_arg(ap, pid_t);
	addr = va_arg(ap, void *);
	data = va_arg(ap, void *);
	va_end(ap);

	if (!size || (request != PTRACE_GETREGSET && request != PTRACE_SETREGSET) ||
	    (unsigned long)addr != NT_X86_XSTATE)
		return real_ptrace(request, pid, addr, data);

	iov = data;
	len = iov->iov_len < size ? iov->iov_len : size;
	/* The real area, and its size, as the real kernel has them. */
	if (real_ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &real_iov) < 0)
		return -1;
	if (real_iov.iov_len > size) {
		errno = EINVAL;   /* The emulated area is smaller than the real one: not a host that exists. */
		return -1;
	}
	if (request == PTRACE_GETREGSET) {
		memset(iov->iov_base, 0, len);
		memcpy(iov->iov_base, state, len < real_iov.iov_len ? len : real_iov.iov_len);
		iov->iov_len = len;
		return 0;
	}
	if (len != size) {
		errno = EFAULT;
		return -1;
	}
	real_iov.iov_base = iov->iov_base;
	return real_ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &real_iov);
}

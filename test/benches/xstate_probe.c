/*
 * This file is part of hostlink.
 * Copyright (c) 2026 hostlink developers
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * For test/test_uml_fpu.py: the host's XSAVE area as the CPU and as ptrace see it.
 *
 *   xstate_probe cpuid          CPUID leaf 0xD, sub-leaf 0: "<ebx> <ecx>" (the area for the features
 *                               enabled in XCR0, and for every feature the CPU has); "0 0" without XSAVE
 *   xstate_probe set <bytes>    stop a child, read its NT_X86_XSTATE regset with PTRACE_GETREGSET (a
 *                               large buffer: prints how much it filled), then write <bytes> of it back
 *                               with PTRACE_SETREGSET: prints "get <filled> set <bytes> errno <e>"
 *                               (0 when the write was taken), as User-Mode Linux does for each process
 */

#define _GNU_SOURCE
#include <cpuid.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char state[1 << 20];

int main(int argc, char **argv)
{
	unsigned int eax, ebx, ecx, edx;
	struct iovec iov = {state, sizeof(state)};
	size_t filled, bytes;
	int status, error = 0;
	pid_t child;

	if (argc == 2 && !strcmp(argv[1], "cpuid")) {
		if (__get_cpuid_max(0, NULL) < 0xd || !__get_cpuid(1, &eax, &ebx, &ecx, &edx) ||
		    !(ecx & bit_XSAVE)) {
			printf("0 0\n");
			return 0;
		}
		__cpuid_count(0xd, 0, eax, ebx, ecx, edx);
		printf("%u %u\n", ebx, ecx);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "set")) {
		fprintf(stderr, "usage: xstate_probe cpuid | xstate_probe set BYTES\n");
		return 2;
	}
	bytes = strtoul(argv[2], NULL, 0);
	if (bytes > sizeof(state)) {
		fprintf(stderr, "xstate_probe: at most %zu bytes, not %zu\n", sizeof(state), bytes);
		return 2;
	}
	child = fork();
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(child, &status, 0);
	if (ptrace(PTRACE_GETREGSET, child, (void *)NT_X86_XSTATE, &iov) < 0) {
		perror("xstate_probe: PTRACE_GETREGSET");
		kill(child, SIGKILL);
		return 1;
	}
	filled = iov.iov_len;
	iov.iov_len = bytes;
	if (ptrace(PTRACE_SETREGSET, child, (void *)NT_X86_XSTATE, &iov) < 0)
		error = errno;
	printf("get %zu set %zu errno %d\n", filled, bytes, error);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return 0;
}

// SPDX-License-Identifier: Apache-2.0

//go:build unix

package main

import "syscall"

// noFollow makes opening an output file fail when its last element is a
// symbolic link.
const noFollow = syscall.O_NOFOLLOW

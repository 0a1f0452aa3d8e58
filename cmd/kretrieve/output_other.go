// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package main

// noFollow is 0 where there is no O_NOFOLLOW: createOutput's Lstat check
// alone refuses symbolic links.
const noFollow = 0

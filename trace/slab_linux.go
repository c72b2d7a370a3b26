package trace

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a huge page on x86-64 and most arm64 Linux.
const hugePage = 2 << 20

// hugePages asks Linux to back xs, not yet touched, with huge pages where
// its memory spans them (with transparent huge pages set to "madvise", as
// they often are, 2 MiB is then one page fault instead of 512). Where the
// advice is refused nothing changes.
func hugePages[T any](xs []T) {
	mem := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), uintptr(len(xs))*unsafe.Sizeof(xs[0]))
	_ = syscall.Madvise(mem, syscall.MADV_HUGEPAGE)
}

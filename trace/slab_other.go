//go:build !linux

package trace

// hugePage is the size from which an array asks for huge pages.
const hugePage = 2 << 20

// hugePages does nothing: huge pages are asked for on Linux alone.
func hugePages[T any](xs []T) {}

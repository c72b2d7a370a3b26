package rows

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// Bounds on what any input may expand to. Every gzip input, wherever it is
// read (a file on the command line, standard input, an upload), goes through
// Decompress, so that a few megabytes that inflate to gigabytes are refused
// while they stream, with little memory and time spent.
const (
	// MaxDecompressed is the most a gzip input may expand to: above the
	// largest input any reader takes (each has its own, smaller limit).
	MaxDecompressed = 8 << 30
	// MaxRatio is how many times its compressed size a gzip input may
	// expand to, once past ratioFrom: real exports and traces compress 5
	// to 50 times; deflate's own ceiling is about 1,030, which bombs reach.
	MaxRatio = 200
	// ratioFrom is the decompressed size from which the ratio is checked:
	// a small file may compress far better than a large one.
	ratioFrom = 16 << 20
)

// ErrBomb is a gzip input that expands more than MaxRatio times.
var ErrBomb = fmt.Errorf("the gzip expands more than %d times its size (a compression bomb?); if it is genuine, decompress it first (gunzip) and give the plain file", MaxRatio)

// SizeError is input past a limit on its size (after decompression). The
// reader that set the limit says what to do.
type SizeError struct{ Limit int64 }

func (e *SizeError) Error() string { return "larger than " + Size(e.Limit) }

// Size words a byte count for a message: "64 KiB", "16 MiB", "8 GiB"
// (whole units, rounded down; bytes below 1 KiB).
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// IsGzip reports whether data starts with gzip's magic bytes.
func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// Decompress returns r's bytes, decompressed when r is gzip (told by its
// first two bytes, as every gpucalc input is), and whether it was. What it
// returns fails with a *SizeError past MaxDecompressed bytes and with
// ErrBomb past MaxRatio, as it is read.
func Decompress(r io.Reader) (io.Reader, bool, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	if magic, _ := br.Peek(2); !IsGzip(magic) {
		return br, false, nil
	}
	in := &counter{r: br}
	z, err := gzip.NewReader(in)
	if err != nil {
		return nil, true, fmt.Errorf("starts like gzip but is not: %w", err)
	}
	return &inflater{z: z, in: in, max: MaxDecompressed}, true, nil
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// inflater bounds a gzip stream's output by size and by ratio.
type inflater struct {
	z   *gzip.Reader
	in  *counter
	out int64
	max int64
	err error
}

func (f *inflater) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if int64(len(p)) > f.max-f.out+1 {
		p = p[:f.max-f.out+1]
	}
	n, err := f.z.Read(p)
	f.out += int64(n)
	switch {
	case f.out > f.max:
		f.err = &SizeError{f.max}
	case f.out > ratioFrom && f.out > MaxRatio*f.in.n:
		f.err = ErrBomb
	case err != nil && !errors.Is(err, io.EOF):
		f.err = fmt.Errorf("reading the gzip: %w", err)
	default:
		return n, err
	}
	return 0, f.err
}

// Limit returns a reader of r that fails with a *SizeError once more than
// max bytes were read: a reader's own bound on its (decompressed) input.
func Limit(r io.Reader, max int64) io.Reader { return &limited{r: r, left: max, max: max} }

type limited struct {
	r         io.Reader
	left, max int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &SizeError{l.max}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, &SizeError{l.max}
	}
	return n, err
}

// MaxName is the longest name (of a kernel, an op, a model) any reader
// takes: the longest C++ template kernel names are a few KiB.
const MaxName = 64 << 10

// Blocks gathers the records a reader keeps, in blocks read in place (Each,
// Pointers, At) or joined into one slice once at the end (All): a slice
// grown a record at a time copies its array again at every growth (for
// millions of records full of pointers, while the collector scans them),
// and holds the old and new arrays at once. Blocks are blockLen records
// long, except those appended whole (Append), as a parallel reader hands
// over each part it read.
type Blocks[T any] struct {
	blocks [][]T
	n      int
	// starts[j] is the index of blocks[j]'s first record; pages[p] the
	// block that holds record p*blockLen: At finds any record from them in
	// a step or two.
	starts []int
	pages  []int32
	// ragged: a block other than the last may be short (Append).
	ragged bool
}

// Add keeps x.
func (b *Blocks[T]) Add(x T) {
	if len(b.blocks) == 0 || len(b.blocks[len(b.blocks)-1]) == cap(b.blocks[len(b.blocks)-1]) {
		b.grow()
	}
	last := &b.blocks[len(b.blocks)-1]
	*last = append(*last, x)
	if b.n%blockLen == 0 {
		b.pages = append(b.pages, int32(len(b.blocks)-1))
	}
	b.n++
}

// grow starts a block, reusing one that Reset kept.
func (b *Blocks[T]) grow() {
	if j := len(b.blocks); j > 0 && len(b.blocks[j-1]) < blockLen {
		b.ragged = true // a short block appended, now followed
	}
	if j := len(b.blocks); j < cap(b.blocks) && cap(b.blocks[:j+1][j]) == blockLen {
		b.blocks = b.blocks[:j+1]
		b.blocks[j] = b.blocks[j][:0]
	} else {
		b.blocks = append(b.blocks, make([]T, 0, blockLen))
	}
	b.starts = append(b.starts, b.n)
}

// Append keeps xs as a block of its own, without copying them: xs
// belongs to b from then on.
func (b *Blocks[T]) Append(xs []T) {
	if len(xs) == 0 {
		return
	}
	if j := len(b.blocks); j > 0 && len(b.blocks[j-1]) < blockLen || len(xs) > blockLen {
		b.ragged = true
	}
	j := len(b.blocks)
	b.blocks = append(b.blocks, xs[:len(xs):len(xs)]) // full: an Add after it starts a block
	b.starts = append(b.starts, b.n)
	for p := (b.n + blockLen - 1) / blockLen; p*blockLen < b.n+len(xs); p++ {
		b.pages = append(b.pages, int32(j))
	}
	b.n += len(xs)
}

// Reset empties b, keeping its blocks of blockLen for the records added
// next (those appended whole are dropped).
func (b *Blocks[T]) Reset() {
	kept := b.blocks[:0]
	for _, x := range b.blocks {
		if cap(x) == blockLen {
			kept = append(kept, x[:0])
		}
	}
	clear(b.blocks[len(kept):])
	b.blocks, b.n, b.starts, b.pages, b.ragged = kept[:0], 0, b.starts[:0], b.pages[:0], false
}

// blockLen is the records in a block.
const blockLen = 4096

// Len is how many records were kept.
func (b *Blocks[T]) Len() int { return b.n }

// Each yields the records in order.
func (b *Blocks[T]) Each(yield func(T) bool) {
	for _, x := range b.blocks {
		for _, r := range x {
			if !yield(r) {
				return
			}
		}
	}
}

// Pointers yields a pointer to each record in order.
func (b *Blocks[T]) Pointers(yield func(*T) bool) {
	for _, x := range b.blocks {
		for i := range x {
			if !yield(&x[i]) {
				return
			}
		}
	}
}

// At returns a pointer to record i.
func (b *Blocks[T]) At(i int) *T {
	if !b.ragged {
		return &b.blocks[i/blockLen][i%blockLen]
	}
	p := i / blockLen
	lo, hi := int(b.pages[p]), len(b.blocks)-1
	if p+1 < len(b.pages) {
		hi = int(b.pages[p+1])
	}
	for lo < hi { // the last block that starts at or before i
		mid := (lo + hi + 1) / 2
		if b.starts[mid] <= i {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return &b.blocks[lo][i-b.starts[lo]]
}

// All returns the records in order, in one slice (nil for none).
func (b *Blocks[T]) All() []T {
	if b.n == 0 {
		return nil
	}
	out := make([]T, 0, b.n)
	for _, x := range b.blocks {
		out = append(out, x...)
	}
	return out
}

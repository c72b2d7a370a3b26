package trace

import (
	"io"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/peak"
	"github.com/gpucalc/gpucalc/roofline"
)

// genTrace is a generated torch.profiler trace of n kernels, each launched
// by its own aten::mm through cudaLaunchKernel (about 700 bytes a kernel,
// as PyTorch writes them); written as it is read, so that the benchmark's
// memory is the reader's.
type genTrace struct {
	n, i int
	cur  []byte
	off  int
}

func (g *genTrace) Read(p []byte) (int, error) {
	for g.off >= len(g.cur) {
		g.cur, g.off = g.cur[:0], 0
		switch i := g.i; {
		case i > g.n:
			return 0, io.EOF
		case i == 0:
			g.cur = append(g.cur, `{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912, "computeMajor": 9, "computeMinor": 0, "numSms": 132}], "record_shapes": 1, "traceEvents": [`...)
		default:
			if i > 1 {
				g.cur = append(g.cur, ",\n"...)
			}
			// The events with their numbers, appended without fmt: the
			// generator's cost is in the benchmark's time.
			ts, n := int64(10*i), int64(i)
			a := strconv.AppendInt
			c := g.cur
			c = a(append(c, `{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": `...), ts, 10)
			c = a(append(c, `, "dur": 8.5, "args": {"External id": `...), n, 10)
			c = a(append(c, `, "Record function id": 0, "Input Dims": [[`...), int64(16*(1+i%64)), 10)
			c = a(append(c, `, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[4096, 1], [1, 4096]], "Concrete Inputs": ["", ""], "Ev Idx": `...), n, 10)
			c = a(append(c, "}},\n"+`{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": `...), ts+1, 10)
			c = a(append(c, `, "dur": 4.2, "args": {"External id": `...), n, 10)
			c = a(append(c, `, "cbid": 211, "correlation": `...), n, 10)
			c = a(append(c, "}},\n"+`{"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "pid": 0, "tid": 7, "ts": `...), ts+5, 10)
			c = a(append(c, `, "dur": 3.1, "args": {"External id": `...), n, 10)
			c = a(append(c, `, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": `...), n, 10)
			c = a(append(c, `, "registers per thread": 168, "shared memory": 213188, "blocks per SM": 0.5, "warps per SM": 6, "grid": [`...), int64(1+i%4), 10)
			g.cur = append(c, `, 66, 1], "block": [384, 1, 1], "est. achieved occupancy %": 9}}`...)
			if i == g.n {
				g.cur = append(g.cur, "]}"...)
			}
		}
		g.i++
	}
	n := copy(p, g.cur[g.off:])
	g.off += n
	return n, nil
}

// BenchmarkRead2MKernels reads and analyses a generated trace of two
// million kernels (with their ops and launches: six million events). It
// reports the trace's size, the peak heap in use (sampled every 50 ms) as
// a multiple of it (target: at most a few) and the seconds.
func BenchmarkRead2MKernels(b *testing.B) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	size, err := io.Copy(io.Discard, &genTrace{n: n})
	if err != nil {
		b.Fatal(err)
	}
	d, _ := devices.Lookup("h100")
	m, _ := roofline.New(d)
	var most uint64
	b.SetBytes(size)
	for b.Loop() {
		most = max(most, peak.Heap(func() {
			tr, err := Read(&genTrace{n: n})
			if err != nil || len(tr.Kernels) != n {
				b.Fatalf("%v", err)
			}
			arch, _ := Arch(tr, d)
			if _, err := Analyze(tr, m, arch); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(size)/1e6, "file-MB")
	b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(most)/float64(size), "peak-heap/file")
}

package occupancy

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// The files in testdata were measured on an H100 (see testdata/README.md where present):
// occ_blocks, occ_potential, occ_avail_smem and kernels were measured with
// the CUDA runtime on an NVIDIA H100 80GB HBM3 (CUDA 13.0, driver 580);
// occ_ref and occ_ref_potential are NVIDIA's cuda_occupancy.h (CUDA 13.0)
// evaluated for nine architectures.

// row is one CSV record with access by column name.
type row struct {
	t    *testing.T
	file string
	line int
	col  map[string]int
	rec  []string
}

func (r *row) str(name string) string {
	i, ok := r.col[name]
	if !ok {
		r.t.Fatalf("%s: no column %q", r.file, name)
	}
	return r.rec[i]
}

func (r *row) int(name string) int {
	v, err := strconv.Atoi(r.str(name))
	if err != nil {
		r.t.Fatalf("%s:%d: column %s: %v", r.file, r.line, name, err)
	}
	return v
}

func (r *row) String() string {
	return r.file + ":" + strconv.Itoa(r.line) + ": " + strings.Join(r.rec, ",")
}

// eachRow streams testdata/name (gunzipping .gz) and calls f for every
// record after the header. It returns the number of records.
func eachRow(t *testing.T, name string, f func(r *row)) int {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var in io.Reader = fh
	if strings.HasSuffix(name, ".gz") {
		z, err := gzip.NewReader(fh)
		if err != nil {
			t.Fatal(err)
		}
		in = z
	}
	cr := csv.NewReader(in)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		t.Fatal(err)
	}
	r := &row{t: t, file: name, col: map[string]int{}}
	for i, h := range head {
		r.col[h] = i
	}
	n := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		r.line = n + 1
		r.rec = rec
		f(r)
	}
	return n
}

func arch(t *testing.T, cc string) devices.Arch {
	t.Helper()
	c, err := devices.ParseCC(cc)
	if err != nil {
		t.Fatal(err)
	}
	a, err := devices.ArchFor(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// h100Kernels reads kernels.csv: each kernel's registers, static shared
// memory and the maximum threads per block cudaFuncGetAttributes reported.
func h100Kernels(t *testing.T) map[string]Kernel {
	m := map[string]Kernel{}
	eachRow(t, "kernels.csv", func(r *row) {
		m[r.str("kernel")] = Kernel{Regs: r.int("regs"), StaticSmem: r.int("static_smem"), MaxThreads: r.int("max_threads_per_block")}
	})
	return m
}

func carveout(r *row) Carveout {
	if c := r.int("carveout"); c >= 0 {
		return CarveoutPercent(c)
	}
	return Carveout{}
}

// TestH100Blocks checks every row of the runtime's answers on the H100. Rows
// whose block exceeds the kernel's maximum threads per block are the
// documented exception: the runtime answers as if the block could launch;
// gpucalc reports 0 blocks with ErrLaunchBounds, and without the launch
// bounds it must agree with the runtime.
func TestH100Blocks(t *testing.T) {
	t.Parallel()
	a := arch(t, "9.0")
	kernels := h100Kernels(t)
	var bounded, fails int
	n := eachRow(t, "occ_blocks.csv.gz", func(r *row) {
		k, ok := kernels[r.str("kernel")]
		if !ok || k.Regs != r.int("regs") || k.StaticSmem != r.int("static_smem") {
			t.Fatalf("%v: kernel not in kernels.csv", r)
		}
		if r.int("err") != 0 {
			t.Fatalf("%v: unexpected runtime error", r)
		}
		l := Launch{Threads: r.int("block"), DynamicSmem: r.int("dyn_smem"), Carveout: carveout(r)}
		want := r.int("blocks")
		got := Calculate(a, k, l)
		if l.Threads > k.MaxThreads {
			bounded++
			if got.Blocks != 0 || !errors.Is(got.Reason, ErrLaunchBounds) {
				t.Errorf("%v: beyond launch bounds, got %d blocks (%v), want 0 and ErrLaunchBounds", r, got.Blocks, got.Reason)
			}
			k.MaxThreads = 0
			got = Calculate(a, k, l)
		}
		if got.Blocks != want || got.Err != nil {
			if fails++; fails < 20 {
				t.Errorf("%v: got %d blocks (err %v), runtime %d", r, got.Blocks, got.Err, want)
			}
		}
	})
	if bounded == 0 {
		t.Error("no row beyond launch bounds")
	}
	t.Logf("%d rows, %d beyond launch bounds, %d mismatches", n, bounded, fails)
}

// refSMs is the SM count of each architecture's device in the reference
// calculation (groundtruth README).
var refSMs = map[string]int{"V100": 80, "T4": 40, "A100": 108, "A10": 72, "Orin": 16, "L40S": 142, "H100": 132, "B200": 148, "RTX5090": 170}

// TestReference checks every row of cuda_occupancy.h's answers for nine
// architectures: blocks, the limiting mask, the per-limit block counts and
// the allocated registers and shared memory per block.
func TestReference(t *testing.T) {
	t.Parallel()
	archs := map[string]devices.Arch{}
	fails := 0
	n := eachRow(t, "occ_ref.csv.gz", func(r *row) {
		name := r.str("arch")
		a, ok := archs[name]
		if !ok {
			a = arch(t, r.str("cc"))
			archs[name] = a
		}
		if r.int("err") != 0 {
			t.Fatalf("%v: reference rows are all valid", r)
		}
		k := Kernel{Regs: r.int("regs"), StaticSmem: r.int("static_smem"), MaxThreads: r.int("max_threads")}
		l := Launch{Threads: r.int("block"), DynamicSmem: r.int("dyn_smem"), Carveout: carveout(r)}
		got := Calculate(a, k, l)
		type pair struct {
			name      string
			got, want int
		}
		for _, p := range []pair{
			{"blocks", got.Blocks, r.int("blocks")},
			{"limiting", int(got.Limiters), r.int("limiting")},
			{"lim_regs", got.ByRegisters, r.int("lim_regs")},
			{"lim_smem", got.BySharedMemory, r.int("lim_smem")},
			{"lim_warps", got.ByWarps, r.int("lim_warps")},
			{"lim_blocks", got.ByBlocks, r.int("lim_blocks")},
			{"alloc_regs_per_block", got.RegsPerBlock, r.int("alloc_regs_per_block")},
			{"alloc_smem_per_block", got.SmemPerBlock, r.int("alloc_smem_per_block")},
		} {
			if p.got != p.want {
				if fails++; fails < 20 {
					t.Errorf("%v: %s = %d, reference %d", r, p.name, p.got, p.want)
				}
			}
		}
	})
	if len(archs) != 9 {
		t.Errorf("%d architectures, want 9", len(archs))
	}
	t.Logf("%d rows, %d mismatches", n, fails)
}

// TestH100Potential checks cudaOccupancyMaxPotentialBlockSize on the H100,
// with fixed and per-thread dynamic shared memory and block-size limits.
func TestH100Potential(t *testing.T) {
	a := arch(t, "9.0")
	kernels := h100Kernels(t)
	eachRow(t, "occ_potential.csv", func(r *row) {
		k := kernels[r.str("kernel")]
		if r.int("err") != 0 {
			t.Fatalf("%v: unexpected runtime error", r)
		}
		o := SuggestOptions{DynamicSmem: r.int("dyn_smem"), SmemPerThread: r.int("smem_per_thread"), BlockSizeLimit: r.int("block_limit"), SMs: 132}
		if o.SmemPerThread > 0 {
			o.DynamicSmem = 0 // -1 in the file: the VariableSMem form has none
		}
		s, err := Suggest(a, k, o)
		if err != nil || s.BlockSize != r.int("block") || s.MinGridSize != r.int("min_grid") {
			t.Errorf("%v: got block %d, min grid %d (%v)", r, s.BlockSize, s.MinGridSize, err)
		}
	})
}

// TestReferencePotential checks cudaOccMaxPotentialOccupancyBlockSize for the
// nine reference architectures.
func TestReferencePotential(t *testing.T) {
	eachRow(t, "occ_ref_potential.csv", func(r *row) {
		a := arch(t, r.str("cc"))
		if r.int("err") != 0 {
			t.Fatalf("%v: reference rows are all valid", r)
		}
		k := Kernel{Regs: r.int("regs"), StaticSmem: r.int("static_smem")}
		s, err := Suggest(a, k, SuggestOptions{DynamicSmem: r.int("dyn_smem"), SMs: refSMs[r.str("arch")]})
		if err != nil || s.BlockSize != r.int("block") || s.MinGridSize != r.int("min_grid") {
			t.Errorf("%v: got block %d, min grid %d (%v)", r, s.BlockSize, s.MinGridSize, err)
		}
	})
}

// TestH100AvailSmem checks cudaOccupancyAvailableDynamicSMemPerBlock on the
// H100 (err 1, cudaErrorInvalidValue, where the blocks cannot be resident),
// and that the size gpucalc says really fits does fit while 128 bytes more
// does not.
func TestH100AvailSmem(t *testing.T) {
	a := arch(t, "9.0")
	kernels := h100Kernels(t)
	overReports := 0
	eachRow(t, "occ_avail_smem.csv", func(r *row) {
		k := kernels[r.str("kernel")]
		nb, threads := r.int("num_blocks"), r.int("block")
		if threads > k.MaxThreads {
			// The runtime ignores launch bounds here too.
			if _, err := AvailableSmem(a, k, nb, threads, Carveout{}); !errors.Is(err, ErrLaunchBounds) {
				t.Errorf("%v: beyond launch bounds, got %v", r, err)
			}
			k.MaxThreads = 0
		}
		s, err := AvailableSmem(a, k, nb, threads, Carveout{})
		if r.int("err") != 0 {
			if !errors.Is(err, ErrUnreachable) {
				t.Errorf("%v: got %+v, %v; runtime failed", r, s, err)
			}
			return
		}
		if err != nil || s.Runtime != r.int("avail_dyn_smem") {
			t.Errorf("%v: got %d (%v), runtime %d", r, s.Runtime, err, r.int("avail_dyn_smem"))
			return
		}
		if s.RuntimeBlocks < nb {
			overReports++
		}
		l := Launch{Threads: threads, DynamicSmem: s.Fits}
		if got := Calculate(a, k, l).Blocks; got < nb {
			t.Errorf("%v: %d B said to fit gives %d blocks", r, s.Fits, got)
		}
		l.DynamicSmem += a.SmemAllocUnit
		if got := Calculate(a, k, l).Blocks; got >= nb && l.DynamicSmem <= a.SmemPerBlockOptin-k.StaticSmem {
			t.Errorf("%v: %d B more than said to fit still gives %d blocks", r, a.SmemAllocUnit, got)
		}
	})
	if overReports == 0 {
		t.Error("the runtime's documented 1 KiB over-report never showed")
	}
	t.Logf("runtime answer too large for the asked blocks in %d rows", overReports)
}

// h100GPCs is the H100 SXM's cluster_gpcs from the device catalog.
func h100GPCs(t *testing.T) []int {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.ClusterGPCs) == 0 || d.SMs != 132 {
		t.Fatalf("H100 SXM: %d SMs, GPCs %v", d.SMs, d.ClusterGPCs)
	}
	return d.ClusterGPCs
}

// TestH100Clusters checks every row of cudaOccupancyMaxActiveClusters
// measured on the H100 (cluster sizes 1, 2, 4, 8, 16 with the non-portable
// size allowed) against the model, and reports how far the GPC-less naive
// bound and CUTLASS's 18-SM GPCs are off.
func TestH100Clusters(t *testing.T) {
	a := arch(t, "9.0")
	kernels := h100Kernels(t)
	gpcs := h100GPCs(t)
	var n, naiveOff, cutlassOff int
	var naiveErr, cutlassErr float64
	eachRow(t, "occ_clusters.csv", func(r *row) {
		k := kernels[r.str("kernel")]
		k.MaxThreads = 0 // the runtime ignores launch bounds here too
		if r.int("err") != 0 {
			t.Fatalf("%v: unexpected runtime error", r)
		}
		res := Calculate(a, k, Launch{Threads: r.int("block"), DynamicSmem: r.int("dyn_smem")})
		c, err := ActiveClusters(a, res, r.int("cluster"), 132, gpcs)
		want := r.int("max_clusters")
		if err != nil || c.Active != want || c.MaxSize != r.int("max_potential_cluster") {
			t.Errorf("%v: got %d clusters, max size %d (%v), runtime %d", r, c.Active, c.MaxSize, err, want)
		}
		n++
		est, _ := ActiveClusters(a, res, r.int("cluster"), 132, nil)
		if want > 0 {
			if c.Naive != want {
				naiveOff++
				naiveErr = max(naiveErr, float64(c.Naive-want)/float64(want))
			}
			if est.Active != want {
				cutlassOff++
				cutlassErr = max(cutlassErr, abs(float64(est.Active-want)/float64(want)))
			}
		}
	})
	t.Logf("%d rows exact; naive bound off in %d rows (up to +%.0f%%), CUTLASS 18-SM GPCs off in %d (up to %.0f%%)", n, naiveOff, 100*naiveErr, cutlassOff, 100*cutlassErr)
}

func abs(x float64) float64 { return max(x, -x) }

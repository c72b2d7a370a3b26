package ncu

import (
	"fmt"
	"io"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/peak"
)

// genExport is a generated `ncu --csv --page raw` export of n launches with the
// columns a lean profile (--section SpeedOfLight, LaunchStats, Occupancy
// and the roofline counters) has, about 520 bytes a row; written as it is
// read, so that the benchmark's memory is the reader's.
type genExport struct {
	n, row int
	cur    string
	off    int
}

var genHeader = []string{"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
	"Device", "CC", "device__attribute_display_name", "dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
	"l1tex__m_l1tex2xbar_write_bytes.sum", "l1tex__m_xbar2l1tex_read_bytes.sum", "l1tex__t_sectors.sum", "launch__registers_per_thread",
	"launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic", "launch__shared_mem_config_size",
	"launch__occupancy_limit_warps", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
	"launch__occupancy_limit_blocks", "launch__occupancy_limit_barriers", "sm__maximum_warps_per_active_cycle_pct",
	"sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__cycles_elapsed.avg",
	"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"}

var genUnits = []string{"", "", "", "", "", "", "", "", "", "", "", "", "byte", "byte", "ns", "byte", "byte", "sector", "register/thread",
	"byte/block", "byte/block", "byte", "block", "block", "block", "block", "block", "%", "%", "cycle", "inst", "inst"}

// genRows are the rows the generator cycles through: 4096 launches of 50
// kernels with varied figures.
var genRows = func() []string {
	out := make([]string, 4096)
	for i := range out {
		out[i] = fmt.Sprintf(`"%d","915","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char *, 3>>(int, T2, T3) %d","1","7","(128, 1, 1)","(%d, 1, 1)","0","9.0","NVIDIA H100 80GB HBM3","%d,%03d,%03d","%d,%03d","%d,%03d","1,024","2,048","%d","32","0","%d","233,472","16","8","5","32","1","100","87.5","%d,%03d","%d,%03d,%03d","0"`+"\n",
			i, i%50, 1+i%4096, 1+i%9, i%1000, i%997, 1+i%500, i%1000, 2+i%90, i%1000, i%100000, i%49152, 3+i%50, i%1000, 1+i%700, i%1000, i%997)
	}
	return out
}()

func (g *genExport) Read(p []byte) (int, error) {
	for g.off >= len(g.cur) {
		switch {
		case g.row > g.n:
			return 0, io.EOF
		case g.row == 0:
			g.cur = build(genHeader, genUnits)
		default:
			g.cur = genRows[g.row%len(genRows)]
		}
		g.off = 0
		g.row++
	}
	n := copy(p, g.cur[g.off:])
	g.off += n
	return n, nil
}

// BenchmarkRead1MRows reads a generated export of a million launches and
// sets each against the H100. It reports the export's size, the peak heap
// in use (sampled) as a multiple of it (target: at most a few) and the
// seconds (target: a few).
func BenchmarkRead1MRows(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	var size int64
	if m, err := io.Copy(io.Discard, &genExport{n: n}); err == nil {
		size = m
	}
	d, err := devices.Lookup("h100")
	if err != nil {
		b.Fatal(err)
	}
	var most uint64
	b.SetBytes(size)
	for b.Loop() {
		most = max(most, peak.Heap(func() {
			ks, err := Read(&genExport{n: n})
			if err != nil || len(ks) != n {
				b.Fatalf("%d kernels: %v", len(ks), err)
			}
			as := make([]Analysis, len(ks))
			for i, k := range ks {
				as[i] = Analyze(k, d)
			}
		}))
	}
	b.ReportMetric(float64(size)/1e6, "file-MB")
	b.ReportMetric(float64(most)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(most)/float64(size), "peak-heap/file")
}

// Package synth writes the large inputs the readers' and writers'
// benchmarks read: an Nsight Compute export of a million launches, a
// torch.profiler trace of two million kernels. Each is made as it is read,
// so that a benchmark's memory is the code's under test, not the input's.
package synth

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NCUExport is an `ncu --csv --page raw` export of n launches (genExport).
func NCUExport(n int) io.Reader { return &genExport{n: n} }

// Trace is a torch.profiler trace of n kernels (genTrace).
func Trace(n int) io.Reader { return &genTrace{n: n} }

// Size is how many bytes r gives (it reads r to the end).
func Size(r io.Reader) int64 {
	n, _ := io.Copy(io.Discard, r)
	return n
}

// genExport is a generated `ncu --csv --page raw` export of n launches with the
// columns a lean profile (--section SpeedOfLight, LaunchStats, Occupancy
// and the roofline counters) has, about 376 bytes a row; written as it is
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
			g.cur = csvLine(genHeader) + csvLine(genUnits)
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

// csvLine is fields quoted as ncu quotes them, and a newline.
func csvLine(fields []string) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
	}
	return b.String() + "\n"
}

// genTrace is a generated torch.profiler trace of n kernels, each launched
// by its own aten::mm through cudaLaunchKernel (about 930 bytes a kernel,
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

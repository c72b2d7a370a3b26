package ops

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/units"
)

// WorkloadDesign holds what a workload file may say beyond its ops, for a
// design review: the device memory it keeps resident and the data that
// crosses the host link on each run.
type WorkloadDesign struct {
	// Memory is device memory the workload holds for its whole run
	// (weights, caches, activations), bytes; 0 when not given.
	Memory int64 `json:"memory_bytes,omitempty"`
	// Transfers is data copied between host and device on each run.
	Transfers []Transfer `json:"transfers,omitempty"`
}

// Transfer is data that crosses the host link (PCIe, NVLink-C2C).
type Transfer struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	Count int    `json:"count"`
}

// EntryDesign holds what a workload file may say about one op beyond its
// shape: which ops produce its inputs and the kernel that implements it.
type EntryDesign struct {
	// Inputs names the ops whose output this op reads. A file that gives
	// none means the op before it (ops are listed in execution order); an
	// empty list means none.
	Inputs []string `json:"inputs,omitempty"`
	// Kernel is the CUDA kernel that runs the op, when the file gives one.
	Kernel *Kernel `json:"kernel,omitempty"`
	// Label is the user's own name for the op where Name is long (a
	// trace's aten op, whose Name adds its input shapes): findings' prose
	// names the op by it, with no kind beside it, so that the shapes
	// appear once, under the finding's Op.
	Label string `json:"-"`
	// Measured is the time one run of the op took (a trace's kernels),
	// seconds; 0 when not measured. Findings quote it and cap what a fix
	// saves by it.
	Measured float64 `json:"-"`
}

// Kernel is what the compiler decided about a kernel and how it is launched
// (ptxas -v and the launch configuration), with its memory access patterns.
type Kernel struct {
	Threads     int `json:"threads"`
	Regs        int `json:"regs"`
	StaticSmem  int `json:"static_smem_bytes"`
	DynamicSmem int `json:"dynamic_smem_bytes"`
	// SpillBytes are ptxas's "bytes spill stores" per thread.
	SpillBytes int `json:"spill_bytes_per_thread"`
	// Global and Shared are a warp's access to global and shared memory.
	Global *Access `json:"global,omitempty"`
	Shared *Access `json:"shared,omitempty"`
}

// Access is one warp-wide access: lane i touches the element at byte
// Offset + i·Stride·Bytes. ILP is the independent loads each thread has in
// flight (global memory only).
type Access struct {
	Bytes  int `json:"elem_bytes"`
	Stride int `json:"stride"`
	Offset int `json:"offset,omitempty"`
	ILP    int `json:"ilp,omitempty"`
}

// DesignSchema documents the optional design-review fields of a workload
// file, for --help and the README.
const DesignSchema = `Optional fields for design review (gpucalc check):
  memory: 20GiB                     # device memory held for the whole run
  transfers:                        # data crossing the host link per run
    - {name: tokens_in, bytes: 64MiB, count: 1}
  ops:
    - name: ...
      inputs: [up_proj]             # producers of this op's input
                                    # (default: the op before; [] for none)
      kernel:                       # the kernel that runs the op
        threads: 256                # per block
        regs: 64                    # per thread
        smem: 16K                   # static shared memory per block
        dynamic_smem: 0             # per block
        spill_bytes: 0              # ptxas "bytes spill stores"
        global: {elem_bytes: 4, stride: 1, offset: 0, ilp: 1}
        shared: {elem_bytes: 4, stride: 32}`

type workloadDesignFile struct {
	Memory    string `yaml:"memory"`
	Transfers []struct {
		Name  string `yaml:"name"`
		Bytes string `yaml:"bytes"`
		Count *int   `yaml:"count"`
	} `yaml:"transfers"`
}

type entryDesignFile struct {
	Inputs *[]string   `yaml:"inputs"`
	Kernel *kernelFile `yaml:"kernel"`
}

type kernelFile struct {
	Threads     int         `yaml:"threads"`
	Regs        int         `yaml:"regs"`
	Smem        string      `yaml:"smem"`
	DynamicSmem string      `yaml:"dynamic_smem"`
	SpillBytes  int         `yaml:"spill_bytes"`
	Global      *accessFile `yaml:"global"`
	Shared      *accessFile `yaml:"shared"`
}

type accessFile struct {
	Bytes  int  `yaml:"elem_bytes"`
	Stride *int `yaml:"stride"`
	Offset int  `yaml:"offset"`
	ILP    int  `yaml:"ilp"`
}

// design converts the design fields of a parsed file into w.
func (f *workloadFile) design(file string, w *Workload) error {
	if f.Memory != "" {
		b, err := units.ParseSize(f.Memory)
		if err != nil || b <= 0 {
			return fmt.Errorf("%s: memory %q: give a size such as 20GiB", file, f.Memory)
		}
		w.Memory = b
	}
	for i, t := range f.Transfers {
		if strings.TrimSpace(t.Name) == "" {
			return fmt.Errorf("%s: transfers[%d]: missing name", file, i)
		}
		b, err := units.ParseSize(t.Bytes)
		if err != nil || b <= 0 {
			return fmt.Errorf("%s: transfers[%d] (%s): bytes %q: give a size such as 64MiB", file, i, t.Name, t.Bytes)
		}
		n := 1
		if t.Count != nil {
			n = *t.Count
		}
		if n < 1 || n > 1<<20 {
			return fmt.Errorf("%s: transfers[%d] (%s): count %d must be between 1 and 1048576", file, i, t.Name, n)
		}
		w.Transfers = append(w.Transfers, Transfer{Name: t.Name, Bytes: b, Count: n})
	}
	for i, e := range f.Ops {
		d, err := e.entryDesign(i, w.Entries)
		if err != nil {
			return fmt.Errorf("%s: ops[%d] (%s): %w", file, i, e.Name, err)
		}
		w.Entries[i].EntryDesign = d
	}
	return nil
}

func (e *entryDesignFile) entryDesign(i int, entries []Entry) (EntryDesign, error) {
	var d EntryDesign
	switch {
	case e.Inputs == nil && i > 0:
		d.Inputs = []string{entries[i-1].Name}
	case e.Inputs != nil:
		for _, in := range *e.Inputs {
			j := slices.IndexFunc(entries[:i], func(x Entry) bool { return x.Name == in })
			if j < 0 {
				return d, fmt.Errorf("input %q is not an op listed before this one", in)
			}
			d.Inputs = append(d.Inputs, in)
		}
	}
	if e.Kernel != nil {
		k, err := e.Kernel.kernel()
		if err != nil {
			return d, fmt.Errorf("kernel: %w", err)
		}
		d.Kernel = &k
	}
	return d, nil
}

// maxLocalPerThread is the most local memory a thread may use: 512 KiB on
// every compute capability (CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability").
const maxLocalPerThread = 512 << 10

func (kf *kernelFile) kernel() (Kernel, error) {
	k := Kernel{Threads: kf.Threads, Regs: kf.Regs, SpillBytes: kf.SpillBytes}
	if k.Threads < 1 || k.Threads > 1024 {
		return k, fmt.Errorf("threads %d: a block has 1 to 1024 threads", k.Threads)
	}
	if k.Regs < 0 || k.Regs > 255 {
		return k, fmt.Errorf("regs %d: registers per thread are 0 to 255", k.Regs)
	}
	if k.SpillBytes < 0 || k.SpillBytes > maxLocalPerThread {
		return k, fmt.Errorf("spill_bytes %d: must be 0 to %d, the local memory a thread may have (CUDA Programming Guide, compute capabilities table)", k.SpillBytes, maxLocalPerThread)
	}
	for _, s := range []struct {
		name string
		in   string
		out  *int
	}{{"smem", kf.Smem, &k.StaticSmem}, {"dynamic_smem", kf.DynamicSmem, &k.DynamicSmem}} {
		if s.in == "" {
			continue
		}
		b, err := units.ParseSize(s.in)
		if err != nil || b < 0 || b > 1<<30 {
			return k, fmt.Errorf("%s %q: give a size such as 48K", s.name, s.in)
		}
		*s.out = int(b)
	}
	var err error
	if k.Global, err = kf.Global.access("global", true); err != nil {
		return k, err
	}
	k.Shared, err = kf.Shared.access("shared", false)
	return k, err
}

func (a *accessFile) access(name string, global bool) (*Access, error) {
	if a == nil {
		return nil, nil
	}
	switch a.Bytes {
	case 1, 2, 4, 8, 16:
	default:
		return nil, fmt.Errorf("%s: elem_bytes %d: a thread accesses 1, 2, 4, 8 or 16 bytes at once", name, a.Bytes)
	}
	if a.Stride == nil {
		return nil, fmt.Errorf("%s: missing stride (in elements; 1 is unit stride)", name)
	}
	if *a.Stride < 0 || *a.Stride > 1<<20 {
		return nil, fmt.Errorf("%s: stride %d: must be 0 to 1048576 elements", name, *a.Stride)
	}
	if a.Offset < 0 || a.Offset > 1<<20 {
		return nil, fmt.Errorf("%s: offset %d: must be 0 to 1048576 bytes", name, a.Offset)
	}
	ilp := a.ILP
	if !global && ilp != 0 {
		return nil, fmt.Errorf("%s: ilp applies to global memory only", name)
	}
	if global && ilp == 0 {
		ilp = 1
	}
	if ilp < 0 || ilp > 64 {
		return nil, fmt.Errorf("%s: ilp %d: independent loads in flight per thread, 1 to 64", name, ilp)
	}
	return &Access{Bytes: a.Bytes, Stride: *a.Stride, Offset: a.Offset, ILP: ilp}, nil
}

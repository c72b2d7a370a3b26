package occupancy

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
	"github.com/gpucalc/gpucalc/symbol"
)

// BuildKernel is one kernel's resource usage as the CUDA tools print it.
type BuildKernel struct {
	// Name is the symbol (mangled for C++); Demangled the readable form.
	Name      string `json:"name"`
	Demangled string `json:"demangled"`
	// Short is the demangled name without parameters:
	// "block_reduce<float, 128>".
	Short string     `json:"short"`
	CC    devices.CC `json:"compute_capability"`
	Regs  int        `json:"regs"`
	// StaticSmem is the kernel's static shared memory, without the 1 KiB
	// CUDA reserves per block.
	StaticSmem int `json:"static_smem_bytes"`
	// Stack is the stack frame (local memory) per thread, bytes.
	Stack       int `json:"stack_bytes_per_thread"`
	SpillStores int `json:"spill_store_bytes"`
	SpillLoads  int `json:"spill_load_bytes"`
	// Barriers is the named barriers ptxas reports (0 when the tool does not
	// say).
	Barriers int `json:"barriers"`
	// Tool is "ptxas" or "cuobjdump".
	Tool string `json:"tool"`
	// ReservedRemoved is true when cuobjdump's SHARED included the 1 KiB
	// reserved per block and it was taken off.
	ReservedRemoved bool `json:"reserved_removed,omitempty"`
	// Problem says why the entry's figures cannot be used (a block cut
	// short, a figure out of range); empty when they can.
	Problem string `json:"problem,omitempty"`
}

// MaxBuildLog is the longest build log read: a build's resource usage is
// far shorter, and reading stops early on the wrong input.
const MaxBuildLog = 64 << 20

// MaxBuildKernels is the most kernels a build log may list: far above any
// project's, each architecture counted apart.
const MaxBuildKernels = 1 << 17

// maxFigure is the largest count or size a log entry may give: far above
// any GPU's limits, small enough that nothing derived from it overflows.
const maxFigure = 1 << 40

// incomplete is the problem of a ptxas entry until its "Used" line.
const incomplete = `incomplete: no "Used N registers" line after "Compiling entry function" (is the log cut short?)`

// Spills reports whether ptxas spilled registers to local memory.
func (k BuildKernel) Spills() bool { return k.SpillStores > 0 || k.SpillLoads > 0 }

// ParseBuildLog reads the resource usage of every kernel in `ptxas -v`
// (nvcc -Xptxas -v) or `cuobjdump --dump-resource-usage` output, or a mix.
// A kernel reported by both tools for the same architecture is taken from
// ptxas, whose shared-memory figure is the static size alone. Kernels are
// returned in order of first appearance.
//
// cuobjdump's SHARED includes the 1 KiB CUDA reserves per block for some
// sm_90 objects and not for others (and never for sm_80, although cc 8.0
// reserves it too; see testdata/buildlog/README.md): the reservation is taken
// off where every kernel of an object shows at least that much, which holds
// for an object whose kernels include it and fails for one whose do not.
func ParseBuildLog(r io.Reader) ([]BuildKernel, error) {
	p := buildParser{index: map[buildKey]int{}, entry: -1}
	lines := rows.NewLines(r)
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := p.line(string(line)); err != nil {
			return nil, fmt.Errorf("line %d: %w", lines.Line(), err)
		}
		if lines.Bytes() > MaxBuildLog {
			return nil, fmt.Errorf("line %d: the log is longer than %d MiB; give the output of one build", lines.Line(), MaxBuildLog>>20)
		}
	}
	p.endSection()
	if len(p.out) == 0 {
		return nil, fmt.Errorf("no kernel found; expected ptxas -v output (\"Compiling entry function '...' for 'sm_90'\") or cuobjdump --dump-resource-usage output (\"Function ...:\" and \"REG:...\")")
	}
	for i := range p.out {
		p.out[i].Demangled = symbol.Demangle(p.out[i].Name)
		p.out[i].Short = symbol.Short(p.out[i].Name)
	}
	return p.out, nil
}

type buildKey struct {
	name string
	cc   devices.CC
}

type buildParser struct {
	out   []BuildKernel
	index map[buildKey]int
	// ptxas state: the entry being compiled and whether the next line holds
	// its stack and spills.
	entry      int
	properties bool
	// cuobjdump state: the section's architecture, the function whose
	// usage line comes next, and the kernels of the current ELF section.
	arch    devices.CC
	fn      string
	section []int
}

// add records a kernel and returns its index (-1: ptxas reported it
// already); it refuses a name over rows.MaxName and kernels past
// MaxBuildKernels.
func (p *buildParser) add(k BuildKernel) (int, error) {
	if len(k.Name) > rows.MaxName {
		return 0, fmt.Errorf("a kernel name of %d bytes, over the %s names may have; is this a build log?", len(k.Name), rows.Size(rows.MaxName))
	}
	key := buildKey{k.Name, k.CC}
	if i, ok := p.index[key]; ok {
		if p.out[i].Tool == "ptxas" && k.Tool == "cuobjdump" {
			return -1, nil
		}
		p.out[i] = k
		return i, nil
	}
	if len(p.out) >= MaxBuildKernels {
		return 0, fmt.Errorf("more than %d kernels; give the log of one build (or one architecture)", MaxBuildKernels)
	}
	p.index[key] = len(p.out)
	p.out = append(p.out, k)
	return len(p.out) - 1, nil
}

func (p *buildParser) line(s string) error {
	t := strings.TrimSpace(s)
	switch {
	case strings.Contains(t, "Compiling entry function '"):
		name, arch, ok := quoted2(t[strings.Index(t, "Compiling entry function '")+len("Compiling entry function "):])
		if !ok {
			return fmt.Errorf("cannot read %s; expected Compiling entry function 'NAME' for 'sm_XX'", rows.Quote(t))
		}
		cc, err := devices.ParseCC(arch)
		if err != nil {
			return err
		}
		if p.entry, err = p.add(BuildKernel{Name: name, CC: cc, Tool: "ptxas", Problem: incomplete}); err != nil {
			return err
		}
		p.properties = false
	case strings.Contains(t, "Function properties for "):
		name := strings.TrimSpace(t[strings.Index(t, "Function properties for ")+len("Function properties for "):])
		p.properties = p.entry >= 0 && len(p.out) > 0 && p.out[p.entry].Name == name
	case p.properties && strings.Contains(t, "bytes stack frame"):
		p.properties = false
		k := &p.out[p.entry]
		for _, f := range strings.Split(t, ",") {
			n, what := countOf(f, k)
			switch what {
			case "bytes stack frame":
				k.Stack = n
			case "bytes spill stores":
				k.SpillStores = n
			case "bytes spill loads":
				k.SpillLoads = n
			}
		}
	case strings.Contains(t, ": Used ") && p.entry >= 0 && len(p.out) > 0:
		k := &p.out[p.entry]
		if k.Problem == incomplete {
			k.Problem = ""
		}
		for _, f := range strings.Split(t[strings.Index(t, ": Used ")+2:], ",") {
			f = strings.TrimSpace(f)
			f = strings.TrimPrefix(strings.TrimPrefix(f, "Used "), "used ")
			n, what := countOf(f, k)
			switch what {
			case "registers":
				k.Regs = n
			case "barriers":
				k.Barriers = n
			case "bytes smem":
				k.StaticSmem = n
			case "bytes lmem":
				k.Stack = max(k.Stack, n)
			}
		}
		p.entry = -1
	case strings.HasPrefix(t, "Fatbin ") || strings.HasPrefix(t, "Fatbin:"):
		p.endSection()
		p.arch = devices.CC{}
	case strings.HasPrefix(t, "arch = "):
		cc, err := devices.ParseCC(strings.TrimSpace(strings.TrimPrefix(t, "arch = ")))
		if err != nil {
			return err
		}
		p.arch = cc
	case strings.HasPrefix(t, "Function ") && strings.HasSuffix(t, ":"):
		p.fn = strings.TrimSuffix(strings.TrimPrefix(t, "Function "), ":")
	case p.fn != "" && strings.HasPrefix(t, "REG:"):
		k := BuildKernel{Name: p.fn, CC: p.arch, Tool: "cuobjdump"}
		p.fn = ""
		if k.CC == (devices.CC{}) {
			return fmt.Errorf("cuobjdump function %s before any \"arch = sm_XX\" line", k.Name)
		}
		for _, f := range strings.Fields(t) {
			name, val, ok := strings.Cut(f, ":")
			if !ok || (name != "REG" && name != "STACK" && name != "SHARED") {
				continue
			}
			n := figure(val, name, &k)
			switch name {
			case "REG":
				k.Regs = n
			case "STACK":
				k.Stack = n
			case "SHARED":
				k.StaticSmem = n
			}
		}
		i, err := p.add(k)
		if err != nil {
			return err
		}
		if i >= 0 {
			p.section = append(p.section, i)
		}
	}
	return nil
}

// endSection takes the reserved shared memory off an ELF section's kernels
// where cuobjdump included it (see ParseBuildLog).
func (p *buildParser) endSection() {
	defer func() { p.section = p.section[:0] }()
	if len(p.section) == 0 {
		return
	}
	a, err := devices.ArchFor(p.out[p.section[0]].CC)
	if err != nil || a.CC.Major < 9 || a.SmemReservedPerBlock == 0 {
		return
	}
	for _, i := range p.section {
		if p.out[i].Tool == "cuobjdump" && p.out[i].StaticSmem < a.SmemReservedPerBlock {
			return
		}
	}
	for _, i := range p.section {
		// A kernel listed twice in one section is one kernel: its
		// reserve comes off once.
		if p.out[i].Tool == "cuobjdump" && !p.out[i].ReservedRemoved {
			p.out[i].StaticSmem -= a.SmemReservedPerBlock
			p.out[i].ReservedRemoved = true
		}
	}
}

// quoted2 reads "'a' for 'b'".
func quoted2(s string) (a, b string, ok bool) {
	parts := strings.Split(s, "'")
	if len(parts) < 4 {
		return "", "", false
	}
	return parts[1], parts[3], parts[1] != ""
}

// countOf splits "256 bytes stack frame" into 256 and "bytes stack frame";
// a number that cannot be a real figure becomes k's problem.
func countOf(s string, k *BuildKernel) (int, string) {
	s = strings.TrimSpace(s)
	num, rest, _ := strings.Cut(s, " ")
	if num == "" || num[0] < '0' || num[0] > '9' {
		return 0, ""
	}
	rest = strings.TrimSpace(rest)
	return figure(num, rest, k), rest
}

// figure reads a count or size the log gives for what; one that is not a
// whole number from 0 to maxFigure becomes k's problem (and reads as 0).
func figure(num, what string, k *BuildKernel) int {
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > maxFigure {
		if k.Problem == "" || k.Problem == incomplete {
			k.Problem = fmt.Sprintf("the log gives %s %s, not a whole number from 0 to %d", what, rows.Quote(num), int64(maxFigure))
		}
		return 0
	}
	return int(n)
}

// Matches reports whether s names the kernel: its symbol, its demangled
// name with or without parameters, or that without template arguments.
func (k BuildKernel) Matches(s string) bool {
	base, _, _ := strings.Cut(k.Short, "<")
	return s == k.Name || s == k.Demangled || s == k.Short || s == base
}

// MaxThreadsByRegs is the largest block, in whole warps, whose registers fit
// in a block (what cudaFuncGetAttributes reports as maxThreadsPerBlock for a
// kernel without launch bounds).
func MaxThreadsByRegs(a devices.Arch, regs int) int {
	for t := a.MaxThreadsPerBlock; t > 0; t -= a.WarpSize {
		if Calculate(a, Kernel{Regs: regs}, Launch{Threads: t}).ByRegisters > 0 {
			return t
		}
	}
	return 0
}

package occupancy

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucalc/gpucalc/rows"
	"github.com/gpucalc/gpucalc/symbol"
)

func parseFixture(t *testing.T, names ...string) []BuildKernel {
	t.Helper()
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "buildlog", n))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	ks, err := ParseBuildLog(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestBuildLogAttributes checks what the importer reads from the real sm_90
// logs (testdata/buildlog, nvcc 13.0 on an H100) against
// cudaFuncGetAttributes of the same binary: registers, static shared memory
// (cuobjdump's SHARED includes the reserved 1 KiB there and must lose it),
// stack, and the largest block the registers allow.
func TestBuildLogAttributes(t *testing.T) {
	a := arch(t, "9.0")
	type attr struct{ regs, static, local, maxThreads int }
	// The file starts with a comment line, then the header.
	data, err := os.ReadFile("testdata/buildlog/attributes-sm90.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")[2:]
	want := map[string]attr{}
	for _, l := range lines {
		f := strings.Split(l, ",")
		want[f[0]] = attr{atoi(t, f[1]), atoi(t, f[2]), atoi(t, f[3]), atoi(t, f[4])}
	}
	for _, file := range []string{"ptxas-sm90.txt", "cuobjdump-sm90.txt"} {
		ks := parseFixture(t, file)
		if len(ks) != len(want) {
			t.Errorf("%s: %d kernels, want %d", file, len(ks), len(want))
		}
		for _, k := range ks {
			w, ok := want[k.Name]
			if !ok || k.CC != a.CC {
				t.Errorf("%s: unexpected kernel %s for %s", file, k.Name, k.CC)
				continue
			}
			if k.Regs != w.regs || k.StaticSmem != w.static || k.Stack != w.local {
				t.Errorf("%s %s: regs %d, smem %d, stack %d; cudaFuncGetAttributes %d, %d, %d", file, k.Name, k.Regs, k.StaticSmem, k.Stack, w.regs, w.static, w.local)
			}
			// transpose_tiled has __launch_bounds__(256, 2), which no log shows.
			if m := MaxThreadsByRegs(a, k.Regs); m != w.maxThreads && !strings.Contains(k.Name, "transpose") {
				t.Errorf("%s: registers allow %d threads, cudaFuncGetAttributes %d", k.Name, m, w.maxThreads)
			}
		}
	}
}

func atoi(t *testing.T, s string) int {
	r := &row{t: t, col: map[string]int{"x": 0}, rec: []string{s}}
	return r.int("x")
}

// TestBuildLogSM80: ptxas and cuobjdump agree for sm_80, where cuobjdump's
// SHARED does not include the reserved 1 KiB; names demangle; spills and
// the stack frame are read; a kernel in both logs is taken from ptxas once.
func TestBuildLogSM80(t *testing.T) {
	px := parseFixture(t, "ptxas-sm80.txt")
	cu := parseFixture(t, "cuobjdump-sm80.txt")
	both := parseFixture(t, "cuobjdump-sm80.txt", "ptxas-sm80.txt", "cuobjdump-sm90.txt")
	if len(px) != 8 || len(cu) != 8 || len(both) != 16 {
		t.Fatalf("%d, %d, %d kernels", len(px), len(cu), len(both))
	}
	byName := map[string]BuildKernel{}
	for _, k := range cu {
		byName[k.Name] = k
	}
	for _, k := range px {
		c := byName[k.Name]
		if k.Regs != c.Regs || k.StaticSmem != c.StaticSmem || k.Stack != c.Stack || c.ReservedRemoved {
			t.Errorf("%s: ptxas %+v, cuobjdump %+v", k.Name, k, c)
		}
	}
	for _, k := range both {
		if k.CC.Major == 8 && k.Tool != "ptxas" {
			t.Errorf("%s sm_80 taken from %s", k.Name, k.Tool)
		}
	}
	found := 0
	for _, k := range px {
		switch k.Demangled {
		case "void block_reduce<double, 512>(double const*, double*, int)": // as c++filt prints it
			found++
			if k.StaticSmem != 4096 || k.Barriers != 1 {
				t.Errorf("%+v", k)
			}
		case "spill_heavy(float const*, float*, int, int)":
			found++
			if !k.Spills() || k.SpillStores == 0 || k.Regs != 32 || k.Stack != 296 {
				t.Errorf("%+v", k)
			}
		case "saxpy":
			found++
		}
	}
	if found != 3 {
		t.Errorf("demangled names: found %d of 3", found)
	}
}

func TestBuildLogFormats(t *testing.T) {
	// Older ptxas: no barriers, lmem instead of a stack frame line.
	old := "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_70'\r\n" +
		"ptxas info    : Used 64 registers, 16 bytes lmem, 1024 bytes smem, 356 bytes cmem[0]\r\n"
	ks, err := ParseBuildLog(strings.NewReader(old))
	if err != nil || len(ks) != 1 || ks[0].Regs != 64 || ks[0].StaticSmem != 1024 || ks[0].Stack != 16 || ks[0].Demangled != "foo(float*)" || ks[0].CC.Major != 7 {
		t.Errorf("%+v %v", ks, err)
	}
	if _, err := ParseBuildLog(strings.NewReader("nothing here\n")); err == nil {
		t.Error("no error without kernels")
	}
	if _, err := ParseBuildLog(strings.NewReader(" Function f:\n  REG:3 SHARED:0\n")); err == nil {
		t.Error("no error for cuobjdump without arch")
	}
}

// TestBuildLogProblems: entries cut short or with impossible figures are
// flagged, not read as zeros, and the other kernels are still read.
func TestBuildLogProblems(t *testing.T) {
	const entry = "ptxas info    : Compiling entry function '%s' for 'sm_90'\n"
	const props = "ptxas info    : Function properties for %s\n"
	const good = "ptxas info    : Compiling entry function 'ok' for 'sm_90'\n" +
		"ptxas info    : Function properties for ok\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n" +
		"ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem\n"
	for _, tt := range []struct{ name, log, want string }{
		{"cut after Compiling, at the end", good + fmt.Sprintf(entry, "k"), "incomplete"},
		{"cut after Function properties", good + fmt.Sprintf(entry, "k") + fmt.Sprintf(props, "k"), "incomplete"},
		{"cut before the next entry", fmt.Sprintf(entry, "k") + good, "incomplete"},
		{"smem 10^22", good + fmt.Sprintf(entry, "k") + "ptxas info    : Used 32 registers, 10000000000000000000000 bytes smem\n", `bytes smem "10000000000000000000000"`},
		{"spills near 2^63", good + fmt.Sprintf(entry, "k") + fmt.Sprintf(props, "k") +
			"    0 bytes stack frame, 9223372036854775807 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 32 registers\n", "bytes spill stores"},
		{"registers beyond int64", good + fmt.Sprintf(entry, "k") + "ptxas info    : Used 99999999999999999999 registers\n", "registers"},
		{"cuobjdump SHARED 10^22", good + "arch = sm_90\nFunction k:\nREG:8 STACK:0 SHARED:10000000000000000000000 LOCAL:0\n", "SHARED"},
		{"cuobjdump REG not a number", good + "arch = sm_90\nFunction k:\nREG:x STACK:0 SHARED:0\n", "REG"},
	} {
		ks, err := ParseBuildLog(strings.NewReader(tt.log))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var k, ok *BuildKernel
		for i := range ks {
			switch ks[i].Name {
			case "k":
				k = &ks[i]
			case "ok":
				ok = &ks[i]
			}
		}
		if ok == nil || ok.Problem != "" || ok.Regs != 32 || ok.StaticSmem != 1024 {
			t.Errorf("%s: the good kernel is %+v", tt.name, ok)
		}
		if k == nil || !strings.Contains(k.Problem, tt.want) {
			t.Errorf("%s: kernel %+v, want a problem with %q", tt.name, k, tt.want)
		}
	}
}

// TestBuildLogUnreadable: a line over 1 MiB or binary data stops with the
// line, in words.
func TestBuildLogUnreadable(t *testing.T) {
	for _, tt := range []struct{ name, log, want string }{
		{"long line", "ptxas info    : 0 bytes gmem\n" + strings.Repeat("x", 2<<20) + "\n", "line 2: longer than 1 MiB"},
		{"no newline", strings.Repeat("ptxas ", 1<<20), "line 1: longer than 1 MiB"},
		{"zeros without newline", strings.Repeat("\x00", 3<<20), "line 1: binary data"},
		{"binary", "ptxas\n\x00\x01\x02\n", "line 2: binary data"},
	} {
		_, err := ParseBuildLog(strings.NewReader(tt.log))
		if err == nil || !strings.Contains(err.Error(), tt.want) || len(err.Error()) > 200 {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestBuildLogBounded: a short log whose mangled names nest deeply (each
// level naming the one below twice, so that the demangled form doubles
// and more per level) demangles within symbol.Cap, and the limits on
// names and kernels are errors with their line.
func TestBuildLogBounded(t *testing.T) {
	for _, depth := range []int{20, 25, 60} {
		inner := "1AIiiE"
		for j := 2; j <= depth; j++ {
			inner = "S_I" + inner + "S" + strings.ToUpper(strconv.FormatInt(int64(j-2), 36)) + "_E"
		}
		name := "_Z1fI" + inner + "EvT_"
		log := fmt.Sprintf("ptxas info    : Compiling entry function '%s' for 'sm_90'\nptxas info    : Function properties for %s\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 8 registers\n", name, name)
		var ks []BuildKernel
		var err error
		start := time.Now()
		alloc := testing.AllocsPerRun(1, func() { ks, err = ParseBuildLog(strings.NewReader(log)) })
		if err != nil || len(ks) != 1 {
			t.Fatalf("depth %d: %v", depth, err)
		}
		k := ks[0]
		if len(k.Demangled) > symbol.Cap(len(name)) || len(k.Short) > symbol.Cap(len(name)) || !strings.HasPrefix(k.Short, "f<") {
			t.Errorf("depth %d (%d-byte log): demangled %d bytes, short %d (%.30q)", depth, len(log), len(k.Demangled), len(k.Short), k.Short)
		}
		if d := time.Since(start); d > time.Second || alloc > 1e5 {
			t.Errorf("depth %d: %v, %.0f allocations", depth, d, alloc)
		}
		if !k.Matches(name) {
			t.Errorf("depth %d: the symbol does not match its kernel", depth)
		}
	}
	long := strings.Repeat("k", rows.MaxName+1)
	for _, log := range []string{
		"ptxas info    : Compiling entry function '" + long + "' for 'sm_90'\n",
		"arch = sm_90\nFunction " + long + ":\n REG:8 STACK:0 SHARED:0\n",
	} {
		if _, err := ParseBuildLog(strings.NewReader(log)); err == nil || !strings.Contains(err.Error(), "over the 64 KiB names may have") || !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("a name over rows.MaxName: %v", err)
		}
	}
	var many strings.Builder
	for i := range MaxBuildKernels + 1 {
		fmt.Fprintf(&many, "ptxas info    : Compiling entry function 'k%d' for 'sm_90'\n", i)
	}
	if _, err := ParseBuildLog(strings.NewReader(many.String())); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d kernels", MaxBuildKernels)) {
		t.Errorf("past MaxBuildKernels: %v", err)
	}
}

// FuzzBuildLog: no input makes the importer panic, and a ptxas kernel
// without a problem had its "Used" line read.
func FuzzBuildLog(f *testing.F) {
	for _, n := range []string{"ptxas-sm90.txt", "cuobjdump-sm90.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "buildlog", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("ptxas info : Compiling entry function 'x' for 'sm_99'\nFunction properties for x\n 1 bytes stack frame\n: Used x registers,,\n")
	f.Fuzz(func(t *testing.T, in string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ks, err := ParseBuildLog(strings.NewReader(in))
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20+1000*uint64(len(in)) {
			t.Fatalf("%d bytes of input allocated %d MiB", len(in), n>>20)
		}
		if err == nil && len(ks) == 0 {
			t.Fatal("no kernels and no error")
		}
		for _, k := range ks {
			if k.Regs < 0 || k.StaticSmem < 0 || k.Stack < 0 || k.SpillStores < 0 || k.SpillLoads < 0 {
				t.Fatalf("negative figure: %+v", k)
			}
			if k.Tool == "ptxas" && k.Problem == "" && !strings.Contains(in, ": Used ") {
				t.Fatalf("complete ptxas kernel without a Used line: %+v", k)
			}
		}
	})
}

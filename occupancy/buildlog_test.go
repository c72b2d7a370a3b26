package occupancy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// FuzzBuildLog: no input makes the importer panic.
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
		ks, err := ParseBuildLog(strings.NewReader(in))
		if err == nil && len(ks) == 0 {
			t.Fatal("no kernels and no error")
		}
	})
}

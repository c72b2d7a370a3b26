package occupancy

import (
	"strings"
	"testing"
)

func TestBlockSizes(t *testing.T) {
	ks := []BuildKernel{
		{Name: "_Z5saxpyifPfS_", Demangled: "saxpy(int, float, float*, float*)", Short: "saxpy"},
		{Name: "_Z12block_reduceIfLi128EEvPKT_PS0_i", Demangled: "void block_reduce<float, 128>(float const*, float*, int)", Short: "block_reduce<float, 128>"},
		{Name: "_Z12block_reduceIdLi256EEvPKT_PS0_i", Demangled: "void block_reduce<double, 256>(double const*, double*, int)", Short: "block_reduce<double, 256>"},
	}
	cases := []struct {
		name    string
		named   []NamedBlockSize
		threads []int
		err     string
	}{
		{"default", nil, []int{256, 256, 256}, ""},
		{"base name covers every instantiation", []NamedBlockSize{{"block_reduce", 128}}, []int{256, 128, 128}, ""},
		{"short and mangled names", []NamedBlockSize{{"block_reduce<float, 128>", 128}, {"_Z12block_reduceIdLi256EEvPKT_PS0_i", 512}, {"saxpy", 64}}, []int{64, 128, 512}, ""},
		{"same size twice is no conflict", []NamedBlockSize{{"block_reduce", 128}, {"block_reduce<float, 128>", 128}}, []int{256, 128, 128}, ""},
		{"two sizes for one kernel", []NamedBlockSize{{"block_reduce", 128}, {"block_reduce<float, 128>", 64}}, nil, "matched by both block_reduce=128 and block_reduce<float, 128>=64"},
		{"the conflict does not depend on order", []NamedBlockSize{{"block_reduce<float, 128>", 64}, {"block_reduce", 128}}, nil, "matched by both"},
		{"unknown name", []NamedBlockSize{{"gemm", 128}, {"saxpy", 64}}, nil, "no kernel named gemm in the log"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			threads, _, err := BlockSizes(ks, 256, c.named)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range threads {
				if threads[i] != c.threads[i] {
					t.Errorf("%s: %d threads, want %d", ks[i].Short, threads[i], c.threads[i])
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// 100,000 op specs of every kind through roofline batch's spec column
// must take at most 2 s (read, priced warm in a CUDA graph, written as CSV).
func BenchmarkRooflineBatchSpecs100k(b *testing.B) {
	var in strings.Builder
	in.WriteString("spec\n")
	for i := range 100000 {
		m := 1 + i%4096
		switch i % 6 {
		case 0:
			fmt.Fprintf(&in, "matmul m=%d n=4096 k=4096 dtype=bf16\n", m)
		case 1:
			fmt.Fprintf(&in, "linear tokens=%d in=8192 out=8192 quant=fp8_block\n", m)
		case 2:
			fmt.Fprintf(&in, "attention b=%d h=32 kv=8 sq=1 sk=%d d=128 kv_dtype=fp8\n", 1+i%64, 128*(1+i%64))
		case 3:
			fmt.Fprintf(&in, "attention b=1 h=%d kv=1 s=%d d=128 causal\n", 1+i%16, 128*(1+i%32))
		case 4:
			fmt.Fprintf(&in, "allreduce n=%d ranks=8 dtype=bf16\n", 1024*m)
		default:
			fmt.Fprintf(&in, "rmsnorm rows=%d cols=4096\n", m)
		}
	}
	data := in.String()
	for b.Loop() {
		var out bytes.Buffer
		code := run([]string{"roofline", "batch", "--input", "-", "--format", "csv", "--l2", "warm", "--launch", "graph"}, strings.NewReader(data), &out, io.Discard, func(string) string { return "" })
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// A 10,000-row model batch must take at most 1 s.
func BenchmarkModelBatch10k(b *testing.B) {
	var in strings.Builder
	in.WriteString("model,device,phase,batch,seq,ctx,tp\n")
	models := []string{"llama-3.1-8b", "llama-3.2-1b", "qwen3-8b", "mixtral-8x7b-v0.1", "llama-3.1-70b"}
	for i := range 10000 {
		phase, seq, ctx := "decode", 1, 256*(1+i%32)
		if i%3 == 0 {
			phase, seq, ctx = "prefill", 128*(1+i%16), 0
		}
		fmt.Fprintf(&in, "%s,h100,%s,%d,%d,%d,%d\n", models[i%len(models)], phase, 1+i%64, seq, ctx, 1<<(i%3))
	}
	data := in.String()
	for b.Loop() {
		var out bytes.Buffer
		code := run([]string{"model", "batch", "--input", "-", "--format", "csv"}, strings.NewReader(data), &out, io.Discard, func(string) string { return "" })
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

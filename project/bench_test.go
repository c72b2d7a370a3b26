package project

import (
	"bytes"
	"testing"
	"time"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

// trace50MB is the Llama prefill trace's events repeated to 50 MB, as
// trace's BenchmarkAnalyze50MB builds its input.
func trace50MB(b *testing.B) []byte {
	raw := testfile.Gunzip(b, "testdata/llama1b_infer_h100.json.gz")
	open := []byte(`"traceEvents": [`)
	i, j := bytes.Index(raw, open), bytes.LastIndex(raw, []byte("]"))
	if i < 0 || j < 0 {
		b.Fatal("unexpected layout")
	}
	head, body, tail := raw[:i+len(open)], bytes.TrimSpace(raw[i+len(open):j]), raw[j:]
	var buf bytes.Buffer
	buf.Write(head)
	for n := 0; buf.Len() < 50<<20; n++ {
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(body)
	}
	buf.Write(tail)
	return buf.Bytes()
}

// BenchmarkProject50MB reads and analyses a 50 MB trace as 'gpucalc trace'
// does, then projects it to three devices. It reports the projection's
// time as a share of reading and analysing (target: at most 0.30).
func BenchmarkProject50MB(b *testing.B) {
	data := trace50MB(b)
	src := lookup(b, "h100")
	targets := []devices.Device{lookup(b, "h200"), lookup(b, "a100-sxm4-80gb"), lookup(b, "b200")}
	m, err := roofline.New(src)
	if err != nil {
		b.Fatal(err)
	}
	var analyse, project time.Duration
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		tr, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		arch, err := trace.Arch(tr, src)
		if err != nil {
			b.Fatal(err)
		}
		a, err := trace.Analyze(tr, m, arch)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Project(tr, &a, src, arch, targets); err != nil {
			b.Fatal(err)
		}
		analyse += t1.Sub(t0)
		project += time.Since(t1)
	}
	b.ReportMetric(project.Seconds()/analyse.Seconds(), "project/trace")
	b.ReportMetric(float64(len(data))/1e6, "file-MB")
}

package main

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// inputRecords counts the data records of a batch input with encoding/csv
// (going on after a stray quote in an unquoted field, as the batch readers
// do); complete is false when the input cannot be read to its end.
func inputRecords(in string) (n int, complete bool) {
	binary := false
	lines := strings.SplitAfter(in, "\n")
	for i, l := range lines {
		if strings.ContainsRune(l, 0) || !utf8.ValidString(l) {
			// Reading stops at the first line of binary data.
			in, binary = strings.Join(lines[:i], ""), true
			break
		}
	}
	defer func() { complete = complete && !binary }()
	cr := csv.NewReader(strings.NewReader(in))
	cr.FieldsPerRecord = -1
	n = -1 // the header
	for {
		_, err := cr.Read()
		if err == io.EOF {
			return n, true
		}
		if err != nil && !errors.Is(err, csv.ErrBareQuote) {
			return n, false
		}
		n++
	}
}

// batchCommands are the batch commands with a header each accepts.
var batchCommands = []struct {
	args   []string
	header string
}{
	{[]string{"occupancy", "batch"}, "device,threads,regs,static_smem,dynamic_smem,carveout\n"},
	{[]string{"roofline", "batch"}, "op,dtype,shape,note,ms\n"},
	{[]string{"model", "batch"}, "model,device,phase,batch,seq,ctx,tp\n"},
}

// checkBatch runs every batch command on header+body and checks that it
// wrote one row per input row, in order, and exits 1 when a row failed or
// the input broke off, 0 otherwise.
func checkBatch(t *testing.T, body string) {
	for _, c := range batchCommands {
		in := c.header + body
		var out, stderr bytes.Buffer
		code := run(append(c.args, "--input", "-", "--format", "csv"), strings.NewReader(in), &out, &stderr, func(string) string { return "" })
		want, complete := inputRecords(in)
		if want <= 0 && complete {
			if code != 1 {
				t.Fatalf("%s on %q: exit %d without rows, want 1 (%s)", c.args, in, code, stderr.String())
			}
			continue
		}
		cr := csv.NewReader(&out)
		cr.FieldsPerRecord = -1
		recs, err := cr.ReadAll()
		if err != nil || len(recs) == 0 {
			if !complete && code != 0 {
				continue // refused before any row
			}
			t.Fatalf("%s on %q: output %q is not CSV (%v); exit %d, %s", c.args, in, out.String(), err, code, stderr.String())
		}
		got := len(recs) - 1
		failed := false
		errCol := len(recs[0]) - 1
		for _, r := range recs[1:] {
			// occupancy batch also explains a valid launch that cannot
			// run (blocks_per_sm 0) in error; a failed row has no figures.
			if r[errCol] != "" && (c.args[0] != "occupancy" || r[len(r)-11] == "") {
				failed = true
			}
		}
		switch {
		case complete && got != want:
			t.Fatalf("%s on %q: %d output rows for %d input rows", c.args, in, got, want)
		case !complete && (got > want || code != 1):
			t.Fatalf("%s on %q: cut input gave %d rows (at most %d) and exit %d, want 1", c.args, in, got, want, code)
		case complete && failed != (code == 1):
			t.Fatalf("%s on %q: exit %d with failed rows %v (%s)", c.args, in, code, failed, stderr.String())
		case complete && !failed && code != 0:
			t.Fatalf("%s on %q: exit %d without failed rows (%s)", c.args, in, code, stderr.String())
		}
	}
}

func TestBatchRows(t *testing.T) {
	for _, body := range []string{
		"sm_90,256,64,0,49152,\n",
		"matmul,bf16,64x64x64,,\n",
		"sm_90,256,64,0,49152,\nfoo,1\nmatmul,bf16,64x64x64 m=4096,,\n\n\"quoted\nnewline\",1,2,3,4,5\n",
		"x\"y,1,2,3,4,5\nsm_90,256,64,0,49152,\n",
		"sm_90,256,64,0,49152,\n\"unclosed,1,2\nsm_90,256,64,0,49152,\n",
		"copy,fp32,1,,NaN\ncopy,fp32,1,,1e400\ncopy,fp32,1,,0.001\n",
		strings.Repeat("sm_80,128,32,0,0,\ncopy,fp32,8,,\n", 500),
		"\x00\x01binary\n",
	} {
		checkBatch(t, body)
	}
}

// FuzzBatchRows: whatever follows a valid header, both batch commands
// write one row per input row and an exit status that says whether all
// succeeded.
func FuzzBatchRows(f *testing.F) {
	f.Add("sm_90,256,64,0,49152,\nmatmul,bf16,64x64x64,,\n")
	f.Add("a\"b,c\n\"d\ne\",f\n,,,,,\n")
	f.Add("attention,bf16,1x1x64x64,causal full,\n")
	f.Fuzz(checkBatch)
}

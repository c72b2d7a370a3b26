package ops

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

func TestReadBatch(t *testing.T) {
	b, err := ReadBatch(strings.NewReader(`op,dtype,shape,note,measured_us
matmul,fp8,64x4096x4096,"e4m3 in, bf16 out",15.1
attention,bf16,8x16x1024x64,causal,61
conv2d,bf16,64x64x56x56x64x3x3,stride1 same,
gelu_tanh,fp32,65536,tanh,4.7
`), []string{"flops"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 4 {
		t.Fatalf("%d rows", len(b.Rows))
	}
	if o := b.Rows[0].Op; o.Out != "bf16" || o.DType != "fp8_e4m3" || b.Rows[0].Measured != 15.1e-6 {
		t.Errorf("row 1: %+v measured %g", o, b.Rows[0].Measured)
	}
	if !b.Rows[1].Op.Causal || b.Rows[2].Op.Pad != 1 || !b.Rows[3].Op.Tanh || b.Rows[2].Measured != 0 {
		t.Errorf("variants not applied: %+v", b.Rows)
	}
}

func TestReadBatchErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "empty"},
		{"op,dtype,shape\n", `no column "note"`},
		{"op,dtype,shape,note\n", "no rows"},
		{"op,dtype,shape,note,flops\ncopy,fp32,8,,1\n", "gpucalc writes"},
		{"op,dtype,shape,note,ms,measured_us\ncopy,fp32,8,,1,1\n", "not both"},
		{"op,op,shape,note\n", `columns 1 and 2: both are "op"`},
		// A column it does not take was echoed before, and a misspelt
		// measured time (ms_measured) went unused.
		{"op,dtype,shape,note,ms_measured\ncopy,fp32,8,,1\n", `line 1, column 5: unknown column "ms_measured"`},
		{"\x00\x01\x02", "binary"},
		{strings.Repeat("z", 3<<20), "longer than 1 MiB"},
	} {
		_, err := ReadBatch(strings.NewReader(tt.in), []string{"flops"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.40q: error %v, want %q", tt.in, err, tt.want)
		} else if len(err.Error()) > 300 {
			t.Errorf("%.40q: message of %d bytes", tt.in, len(err.Error()))
		}
	}
}

// TestReadBatchRowErrors: each bad row gets its own error, in order, and
// the rows around it are read.
func TestReadBatchRowErrors(t *testing.T) {
	const head = "op,dtype,shape,note,ms\n"
	const good = "copy,fp32,8,,1\n"
	for _, tt := range []struct{ row, want string }{
		{"copy,fp32,8x8,,\n", "shape=\"8x8\""},
		{"copy,fp32,8,,-1\n", "column 5 (ms) \"-1\""},
		{"copy,fp32,8,,NaN\n", "column 5 (ms) \"NaN\""},
		{"copy,fp32,8,,+Inf\n", "column 5 (ms) \"+Inf\""},
		{"copy,fp32,8,,0\n", "column 5 (ms) \"0\""},
		{"copy,fp32\n", "2 fields, the header has 5"},
		{"copy,fp32,8,,1,x\n", "6 fields, the header has 5"},
		{"matmul,bf16,64x64x64 m=4096,,\n", "shape cell"},
		{"matmul,bf16 batch=1000,64x64x64,,\n", "dtype cell"},
		{"matmul m=1,bf16,64x64x64,,\n", "op cell"},
		{"attention,bf16,1x2x3x4,causal full,\n", "conflict"},
		{"gelu_tanh,bf16,64,erf,\n", "conflict"},
		{"copy,fp32,9223372036854775808,,\n", "positive whole number"},
		{"copy,fp32,8,x\"y,\n", "inside a field"},
		{"warp,fp32,8,,\n", "unknown op"},
	} {
		b, err := ReadBatch(strings.NewReader(head+good+tt.row+good), nil)
		if err != nil {
			t.Errorf("%q: %v", tt.row, err)
			continue
		}
		if len(b.Rows) != 3 || b.Failed() != 1 {
			t.Errorf("%q: %d rows, %d failed; want 3 rows, 1 failed", tt.row, len(b.Rows), b.Failed())
			continue
		}
		if e := b.Rows[1].Err; e == nil || !strings.Contains(e.Error(), tt.want) || !strings.HasPrefix(e.Error(), "line 3: ") {
			t.Errorf("%q: row error %v, want line 3 and %q", tt.row, e, tt.want)
		}
		if b.Rows[0].Line != 2 || b.Rows[2].Line != 4 {
			t.Errorf("%q: lines %d, %d; want 2, 4", tt.row, b.Rows[0].Line, b.Rows[2].Line)
		}
	}
}

// TestReadBatchUnclosedQuote: rows before an unclosed quote are kept and the
// error names its line.
func TestReadBatchUnclosedQuote(t *testing.T) {
	in := "op,dtype,shape,note\n" + strings.Repeat("copy,fp32,8,\n", 5000) + "copy,fp32,8,\"oops\n" + strings.Repeat("copy,fp32,8,\n", 4999)
	b, err := ReadBatch(strings.NewReader(in), nil)
	if err == nil || !strings.Contains(err.Error(), "line 5002") {
		t.Fatalf("error %v, want one at line 5002", err)
	}
	if len(b.Rows) != 5000 {
		t.Errorf("%d rows before the error, want 5000", len(b.Rows))
	}
}

// FuzzReadBatch: every record after the header is one row, in order.
func FuzzReadBatch(f *testing.F) {
	f.Add("op,dtype,shape,note\nmatmul,bf16,1x2x3,\n")
	f.Add("op,dtype,shape,note,ms\nattention,bf16,1x2x3x4,causal,0.1\n")
	f.Add("op,dtype,shape,note\ncopy,fp32,8,a\"b\nx\n")
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ReadBatch(strings.NewReader(in), nil)
		if err == nil && len(b.Rows) == 0 {
			t.Fatal("accepted input without rows")
		}
		if err != nil {
			return
		}
		// Count records independently: encoding/csv goes on after a stray
		// quote in an unquoted field.
		cr := csv.NewReader(strings.NewReader(in))
		cr.FieldsPerRecord = -1
		n := -1
		for {
			_, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil && !errors.Is(err, csv.ErrBareQuote) {
				return
			}
			n++
		}
		if len(b.Rows) != n {
			t.Fatalf("%d rows for %d records", len(b.Rows), n)
		}
		for i := 1; i < len(b.Rows); i++ {
			if b.Rows[i].Line <= b.Rows[i-1].Line {
				t.Fatalf("rows out of order: line %d after %d", b.Rows[i].Line, b.Rows[i-1].Line)
			}
		}
	})
}

// TestReadBatchBytes: a batch keeps its rows in memory, so its bytes are
// bounded, the limit an error that says to split the file.
func TestReadBatchBytes(t *testing.T) {
	long := "op,dtype,shape,note\n" + strings.Repeat("matmul,bf16,64x64x64,"+strings.Repeat("a", 1<<20-30)+"\n", MaxBatchBytes>>20+2)
	if _, err := ReadBatch(strings.NewReader(long), nil); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB; split the file") {
		t.Errorf("past the bytes: %v", err)
	}
}

// TestReadBatchSpec: a spec column takes any op spec in place of roof_bench's
// four columns; giving both, or neither, is a header error.
func TestReadBatchSpec(t *testing.T) {
	in := "spec,measured_us\n\"linear tokens=16 in=8192 out=8192 quant=fp8\",20\nattention b=8 h=32 kv=8 sq=1 sk=4096 d=128 kv_dtype=fp8,\nbogus,\n"
	b, err := ReadBatch(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 3 || b.Rows[0].Op.Quant != QuantFP8 || math.Abs(b.Rows[0].Measured-20e-6) > 1e-15 || b.Rows[1].Op.KVType != "fp8_e4m3" || b.Rows[2].Err == nil {
		t.Errorf("%+v", b.Rows)
	}
	for in, want := range map[string]string{
		"spec,op\nmatmul m=1 n=1 k=1,matmul\n": `unknown column "op"; the header holds spec`,
		"measured_us\n1\n":                     "or a spec column (any op spec) instead of the four",
	} {
		if _, err := ReadBatch(strings.NewReader(in), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

package ops

import (
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
		{"op,dtype,shape\n", `missing column "note"`},
		{"op,dtype,shape,note\n", "no rows"},
		{"op,dtype,shape,note,flops\ncopy,fp32,8,,1\n", "gpucalc writes"},
		{"op,dtype,shape,note\ncopy,fp32,8x8,\n", "line 2"},
		{"op,dtype,shape,note,ms\ncopy,fp32,8,,-1\n", "positive time"},
		{"op,dtype,shape,note,ms,measured_us\ncopy,fp32,8,,1,1\n", "not both"},
		{"op,dtype,shape,note\ncopy,fp32\n", "wrong number of fields"},
	} {
		_, err := ReadBatch(strings.NewReader(tt.in), []string{"flops"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func FuzzReadBatch(f *testing.F) {
	f.Add("op,dtype,shape,note\nmatmul,bf16,1x2x3,\n")
	f.Add("op,dtype,shape,note,ms\nattention,bf16,1x2x3x4,causal,0.1\n")
	f.Fuzz(func(t *testing.T, in string) {
		b, err := ReadBatch(strings.NewReader(in), nil)
		if err == nil && len(b.Rows) == 0 {
			t.Fatal("accepted input without rows")
		}
	})
}

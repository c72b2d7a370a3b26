package ops

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// The trace importer's kinds, and casts, priced by hand: bytes read once
// and written once in their own types.
func TestTracedCost(t *testing.T) {
	cases := []struct {
		name               string
		op                 Op
		flops, trans, byts float64
	}{
		// 8 bf16 rows of 2048 gathered by 8 int64 indices.
		{"embedding", Op{Kind: Embedding, DType: devices.BF16, Rows: 8, Cols: 2048}, 0, 0, 8*2048*2 + 8*2048*2 + 8*8},
		// mean over the last 2048 of 2048×2048 fp32: one add per input.
		{"reduce", Op{Kind: Reduce, DType: devices.FP32, Rows: 2048, Cols: 2048}, 2048 * 2048, 0, 2048*2048*4 + 2048*4},
		// 64 channels of 64·56·56 bf16: 7 FLOPs per element, 3 per channel,
		// one rsqrt per channel, four fp32 parameters per channel.
		{"batchnorm", Op{Kind: BatchNorm, DType: devices.BF16, Rows: 64, Cols: 64 * 56 * 56}, 7*64*64*56*56 + 3*64, 64, 2*64*64*56*56*2 + 64*16},
		{"unary", Op{Kind: Unary, DType: devices.FP32, Elems: 1000}, 1000, 0, 8000},
		// fp32 → bf16 cast: 4 bytes read, 2 written per element.
		{"cast", Op{Kind: Copy, DType: devices.FP32, Out: devices.BF16, Elems: 1000}, 0, 0, 6000},
		{"copy", Op{Kind: Copy, DType: devices.BF16, Elems: 1000}, 0, 0, 4000},
	}
	for _, c := range cases {
		got := c.op.Cost()
		if got.FLOPs() != c.flops || got.Transcendentals != c.trans || got.Bytes != c.byts {
			t.Errorf("%s: %g FLOPs, %g transcendentals, %g bytes; want %g, %g, %g", c.name, got.FLOPs(), got.Transcendentals, got.Bytes, c.flops, c.trans, c.byts)
		}
	}
}

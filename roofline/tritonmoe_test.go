package roofline

import (
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// TestTritonConfig checks the configuration lookup against SGLang's files
// (data/triton_moe.yaml, copied from github.com/sgl-project/sglang) and
// its get_default_config.
func TestTritonConfig(t *testing.T) {
	for _, tc := range []struct {
		device         string
		e, n, m        int64
		fp8Block, down bool
		want           tritonTile
		tuned          bool
	}{
		// triton_3_2_0/E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3.json:
		// 3000 tokens take the row of 3072, 20 the row of 16 (16 and 24
		// are as near; Python's min keeps the first).
		{"H100 SXM", 128, 768, 3000, false, false, tritonTile{128, 256, 64, 1, 8, 4}, true},
		{"H100 SXM", 128, 768, 20, false, false, tritonTile{16, 128, 128, 1, 8, 5}, true},
		// triton_3_5_1/E=65,N=1536,device_name=NVIDIA_H100_80GB_HBM3_down.json
		// serves the down projection alone.
		{"H100 SXM", 65, 1536, 1, false, true, tritonTile{16, 256, 128, 16, 4, 3}, true},
		// triton_3_4_0/E=256,N=256,device_name=NVIDIA_B200,dtype=fp8_w8a8,block_shape=[128, 128].json
		{"B200", 256, 256, 1, true, false, tritonTile{16, 64, 128, 32, 4, 4}, true},
		// No file: get_default_config (bf16: 16x32x64 while the tokens
		// are no more than the experts, else 64x64x32; fp8 blocks:
		// 64 x block_n x block_k).
		{"H100 SXM", 3, 5, 2, false, false, tritonTile{16, 32, 64, 1, 4, 3}, false},
		{"H100 SXM", 3, 5, 100, false, false, tritonTile{64, 64, 32, 8, 4, 3}, false},
		{"L40S", 3, 5, 100, true, false, tritonTile{64, 128, 128, 32, 4, 3}, false},
	} {
		d, err := devices.Lookup(tc.device)
		if err != nil {
			t.Fatal(err)
		}
		got, tuned := tritonConfig(cudaName(d.Aliases), tc.e, tc.n, tc.m, tc.fp8Block, tc.down)
		if got != tc.want || tuned != tc.tuned {
			t.Errorf("%s E=%d N=%d M=%d fp8_block=%v down=%v: got %+v (tuned %v), want %+v (tuned %v)",
				tc.device, tc.e, tc.n, tc.m, tc.fp8Block, tc.down, got, tuned, tc.want, tc.tuned)
		}
	}
	// The held-out GPUs' device names reach their files.
	d, err := devices.Lookup("H200 SXM")
	if err != nil {
		t.Fatal(err)
	}
	if name := cudaName(d.Aliases); name != "NVIDIA_H200" {
		t.Errorf("H200's CUDA name: got %q", name)
	}
	if _, tuned := tritonConfig("NVIDIA_H200", 257, 256, 64, true, false); !tuned {
		t.Error("SGLang's E=257,N=256 H200 fp8_w8a8 [128, 128] file not found")
	}
}

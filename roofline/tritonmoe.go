package roofline

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// tritonTile is one configuration of SGLang's Triton fused-MoE kernel
// (fused_moe_kernel): a CTA computes BM rows of one expert's sorted tokens
// by BN columns of its weight, stepping over K by BK.
type tritonTile struct {
	BM, BN, BK, GroupM, Warps, Stages int64
}

//go:embed data/triton_moe.yaml
var tritonMoEYAML []byte

// tritonMoEFiles is data/triton_moe.yaml: by SGLang's file name (the key
// its get_moe_configs looks up), the tiles by token count.
var tritonMoEFiles = sync.OnceValue(func() map[string]map[int64]tritonTile {
	var doc struct {
		Files []struct {
			Path string             `yaml:"path"`
			M    map[int64][6]int64 `yaml:"m"`
		} `yaml:"files"`
	}
	if err := yaml.Unmarshal(tritonMoEYAML, &doc); err != nil {
		panic(fmt.Sprintf("roofline: data/triton_moe.yaml: %v", err))
	}
	out := map[string]map[int64]tritonTile{}
	for _, f := range doc.Files {
		_, name, _ := strings.Cut(f.Path, "/")
		rows := map[int64]tritonTile{}
		for m, r := range f.M {
			rows[m] = tritonTile{r[0], r[1], r[2], r[3], r[4], r[5]}
		}
		out[name] = rows
	}
	return out
})

// cudaName is the device's name as torch.cuda.get_device_name reports it
// (its catalog alias that starts with the vendor's name), spaces as
// underscores as in SGLang's file names; empty when the catalog has none.
func cudaName(aliases []string) string {
	for _, a := range aliases {
		if strings.HasPrefix(a, "NVIDIA ") {
			return strings.ReplaceAll(a, " ", "_")
		}
	}
	return ""
}

// tritonDType is SGLang's dtype selector of a fused-MoE configuration file
// (get_config_file_name): none for bf16, fp8_w8a8 with the block shape for
// DeepSeek-style fp8 blocks.
func tritonDType(fp8Block bool) string {
	if fp8Block {
		return ",dtype=fp8_w8a8,block_shape=[128, 128]"
	}
	return ""
}

// tritonConfig is the configuration SGLang's Triton fused MoE runs with on
// device name dev for e local experts of width n and m tokens
// (try_get_optimal_moe_config): the tuned file's row of the nearest token
// count (the smaller on a tie, as Python's min over the file's ascending
// keys), the down projection's own file where there is one; else
// get_default_config's. tuned says which.
func tritonConfig(dev string, e, n, m int64, fp8Block, down bool) (t tritonTile, tuned bool) {
	name := fmt.Sprintf("E=%d,N=%d,device_name=%s%s", e, n, dev, tritonDType(fp8Block))
	files := tritonMoEFiles()
	rows, ok := files[name+"_down.json"]
	if !down || !ok {
		rows, ok = files[name+".json"]
	}
	if dev != "" && ok {
		keys := make([]int64, 0, len(rows))
		for k := range rows {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		best := keys[0]
		for _, k := range keys {
			if abs64(k-m) < abs64(best-m) {
				best = k
			}
		}
		return rows[best], true
	}
	switch {
	case fp8Block:
		return tritonTile{64, 128, 128, 32, 4, 3}, false
	case m <= e:
		return tritonTile{16, 32, 64, 1, 4, 3}, false
	}
	return tritonTile{64, 64, 32, 8, 4, 3}, false
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

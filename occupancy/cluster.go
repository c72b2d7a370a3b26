package occupancy

import (
	"errors"
	"fmt"

	"github.com/gpucalc/gpucalc/devices"
)

// clusterBlocksPerSM caps the blocks per SM under cluster launch: measured
// on the H100 (cudaOccupancyMaxActiveClusters reports at most 8 one-block
// clusters per SM where the plain calculation allows 32), assumed for the
// other architectures with clusters.
const clusterBlocksPerSM = 8

// cutlassSMsPerGPC is CUTLASS's assumption for GPUs whose GPCs are unknown
// (tile_scheduler_params.h, get_max_cta_occupancy: max_sm_per_gpc = 18).
const cutlassSMsPerGPC = 18

// Clusters is how many thread-block clusters can be active on the whole GPU.
type Clusters struct {
	Size int `json:"cluster_size"`
	// BlocksPerSM is the plain calculation's answer; SlotsPerSM that capped
	// at 8, what cluster launch allows.
	BlocksPerSM int `json:"blocks_per_sm"`
	SlotsPerSM  int `json:"slots_per_sm"`
	// Active is clusters active at once on the GPU; Blocks = Active × Size.
	Active int `json:"active_clusters"`
	Blocks int `json:"active_blocks"`
	// Naive is SlotsPerSM × SMs / Size, the bound without GPCs.
	Naive int `json:"naive_bound"`
	// GPCs are the SM counts per GPC used; Estimated is true when they are
	// CUTLASS's assumption (18 SMs per GPC) rather than the device's.
	GPCs      []int `json:"sms_per_gpc"`
	Estimated bool  `json:"gpcs_estimated"`
	// MaxSize is the largest cluster size with a cluster active
	// (cudaOccupancyMaxPotentialClusterSize, non-portable sizes allowed).
	MaxSize int `json:"max_potential_cluster_size"`
	// NonPortable is true for sizes above the portable 8, which need
	// cudaFuncAttributeNonPortableClusterSizeAllowed.
	NonPortable bool `json:"non_portable"`
}

// maxSMs bounds the SMs of a GPU ActiveClusters takes: 1024, the largest
// count a device file may give (the catalog's largest GPU has 160).
const maxSMs = 1024

// ErrNoClusters is returned for architectures without thread-block clusters.
var ErrNoClusters = errors.New("thread-block clusters need compute capability 9.0 or newer")

// ActiveClusters models cudaOccupancyMaxActiveClusters (NVIDIA publishes no
// formula): a cluster's blocks run on distinct SMs of one GPC, each SM holds
// at most min(blocks per SM, 8) blocks, so a GPC of n SMs holds
// floor(n × slots / size) clusters when n ≥ size and none otherwise. gpcs
// are the device's SM counts per GPC as cluster launch sees them; nil means
// unknown, and CUTLASS's 18 SMs per GPC are assumed.
func ActiveClusters(a devices.Arch, r Result, size, sms int, gpcs []int) (Clusters, error) {
	c := Clusters{Size: size, BlocksPerSM: r.Blocks, SlotsPerSM: min(r.Blocks, clusterBlocksPerSM), GPCs: gpcs}
	switch {
	case a.MaxClusterSize == 0:
		return c, ErrNoClusters
	case size < 1 || size > a.MaxClusterSizeNonPortable:
		return c, fmt.Errorf("cluster size %d: cc %s allows 1 to %d blocks per cluster (more than %d only with cudaFuncAttributeNonPortableClusterSizeAllowed)", size, a.CC, a.MaxClusterSizeNonPortable, a.MaxClusterSize)
	case sms < 1:
		return c, errors.New("the number of SMs must be known for clusters on the whole GPU")
	case sms > maxSMs:
		// The GPCs are listed one by one; refuse rather than allocate
		// without bound.
		return c, fmt.Errorf("%d SMs: more than any GPU has (the model takes up to %d)", sms, maxSMs)
	}
	c.NonPortable = size > a.MaxClusterSize
	if len(c.GPCs) == 0 {
		c.Estimated = true
		c.GPCs = nil
		for left := sms; left > 0; left -= cutlassSMsPerGPC {
			c.GPCs = append(c.GPCs, min(left, cutlassSMsPerGPC))
		}
	}
	for _, n := range c.GPCs {
		if n >= size {
			c.Active += n * c.SlotsPerSM / size
		}
	}
	if c.SlotsPerSM > 0 {
		for _, n := range c.GPCs {
			c.MaxSize = max(c.MaxSize, min(n, a.MaxClusterSizeNonPortable))
		}
	}
	c.Blocks = c.Active * size
	c.Naive = c.SlotsPerSM * sms / size
	return c, nil
}

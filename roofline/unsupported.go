package roofline

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
)

// UnsupportedError is an op whose data type the device cannot run on any
// path: an fp8 GEMM on an A100, bf16 on a V100. Side-by-side answers give
// that device's column Reason instead of failing the others.
type UnsupportedError struct {
	Device string
	Op     string
	DType  devices.DType
	// Tensor is whether the op runs on tensor cores where a device has them.
	Tensor bool
	// Has lists the device's peaks; Suggest the type to use instead, if any.
	Has     []string
	Suggest devices.DType
}

// Reason is the gap in a few words: "no fp8 tensor cores".
func (e *UnsupportedError) Reason() string {
	k := devices.PeakKey(e.DType, devices.CUDACores)
	if e.Tensor {
		return "no " + k + " tensor cores"
	}
	return "no " + k + " rate"
}

func (e *UnsupportedError) Error() string {
	s := fmt.Sprintf("%s cannot run %s: %s (it has %s)", e.Device, e.Op, e.Reason(), strings.Join(e.Has, ", "))
	if e.Suggest != "" {
		// The flag or spec field that sets it is the command's to name.
		s += fmt.Sprintf("; use %s instead", e.Suggest)
	}
	return s
}

// unsupported is the error for an op of type dt that d has no rate for,
// with the type of the same width to use where the device has one (bf16
// arrived with Ampere: V100 and T4 run fp16).
func unsupported(d devices.Device, kind string, dt devices.DType, tensor bool) error {
	e := &UnsupportedError{Device: d.Name, Op: kind, DType: dt, Tensor: tensor, Has: d.PeakKeys()}
	p := devices.CUDACores
	if tensor {
		p = devices.Tensor
	}
	if _, err := d.Peak(devices.FP16, p); dt == devices.BF16 && err == nil {
		e.Suggest = devices.FP16
	}
	return e
}

package devices

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/units"
)

// DType is a numeric data type.
type DType string

// The data types gpucalc knows. FP8 comes in two encodings of one byte each;
// both run at the same tensor-core rate.
const (
	FP64    DType = "fp64"
	FP32    DType = "fp32"
	TF32    DType = "tf32"
	BF16    DType = "bf16"
	FP16    DType = "fp16"
	FP8E4M3 DType = "fp8_e4m3"
	FP8E5M2 DType = "fp8_e5m2"
	INT8    DType = "int8"
	INT32   DType = "int32"
	FP4     DType = "fp4"
)

// DTypes lists every data type, in order of decreasing width.
var DTypes = []DType{FP64, FP32, TF32, INT32, BF16, FP16, FP8E4M3, FP8E5M2, INT8, FP4}

var dtypeAliases = map[string]DType{
	"fp64": FP64, "float64": FP64, "double": FP64, "f64": FP64,
	"fp32": FP32, "float32": FP32, "float": FP32, "f32": FP32,
	"tf32": TF32,
	"bf16": BF16, "bfloat16": BF16,
	"fp16": FP16, "float16": FP16, "half": FP16, "f16": FP16,
	"fp8": FP8E4M3, "fp8_e4m3": FP8E4M3, "e4m3": FP8E4M3, "fp8e4m3": FP8E4M3, "float8_e4m3fn": FP8E4M3,
	"fp8_e5m2": FP8E5M2, "e5m2": FP8E5M2, "fp8e5m2": FP8E5M2, "float8_e5m2": FP8E5M2,
	"int8": INT8, "i8": INT8,
	"int32": INT32, "i32": INT32,
	"fp4": FP4, "nvfp4": FP4, "e2m1": FP4, "fp4_e2m1": FP4,
}

// ParseDType parses a data type name: fp32, bf16, fp8 (= e4m3), e5m2, int8, ...
func ParseDType(s string) (DType, error) {
	if d, ok := dtypeAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return d, nil
	}
	return "", fmt.Errorf("unknown data type %q; expected one of fp64, fp32, tf32, bf16, fp16, fp8 (e4m3), e5m2, int8, int32, fp4", s)
}

// Size is the storage size of one element in bytes. TF32 is stored as FP32;
// FP4 packs two elements per byte.
func (d DType) Size() float64 {
	switch d {
	case FP64:
		return 8
	case FP32, TF32, INT32:
		return 4
	case BF16, FP16:
		return 2
	case FP8E4M3, FP8E5M2, INT8:
		return 1
	case FP4:
		return 0.5
	}
	return 0
}

// Path is the kind of execution unit an operation runs on.
type Path string

// Execution paths.
const (
	CUDACores Path = "cuda"   // FMA/ALU pipes
	Tensor    Path = "tensor" // tensor cores (matrix units)
)

// FormatPeak formats a rate of the peak key k (see PeakKey): TOP/s for the
// integer types, which datasheets count in operations, TFLOP/s otherwise.
func FormatPeak(k string, v float64) string {
	if strings.HasPrefix(k, "int") {
		return units.FormatOPS(v)
	}
	return units.FormatFLOPS(v)
}

// PeakKey names a peak in the catalog: the data type's rate family and the
// path, such as "bf16_tensor" or "fp32". Both FP8 encodings share "fp8".
func PeakKey(d DType, p Path) string {
	k := string(d)
	if d == FP8E4M3 || d == FP8E5M2 {
		k = "fp8"
	}
	if p == Tensor {
		k += "_tensor"
	}
	return k
}

package query

import (
	"errors"
	"fmt"
	"testing"
)

func TestFieldErrorReadsAsAFlag(t *testing.T) {
	e := &FieldError{Field: "regs", Value: "300", Allowed: "at most 255 registers a thread"}
	if got, want := e.Error(), "--regs 300: at most 255 registers a thread"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &FieldError{Field: "op", Value: "matmul m=0", Allowed: "m must be positive"}
	if got, want := e.Error(), "--op 'matmul m=0': m must be positive"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestFieldErrorSources(t *testing.T) {
	for _, c := range []struct {
		e    FieldError
		want string
	}{
		{FieldError{Field: "model", Value: "gpt-9", Allowed: `unknown model "gpt-9"`, Source: FromArg}, `unknown model "gpt-9"`},
		{FieldError{Field: "GPUCALC_DEVICE", Value: "h900", Allowed: `unknown device "h900"`, Source: FromEnv}, `from GPUCALC_DEVICE: unknown device "h900"`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestErrorsErr(t *testing.T) {
	if err := Errors(nil).Err(); err != nil {
		t.Fatalf("no field errors: Err() = %v, want nil", err)
	}
	one := Errors{{Field: "tp", Value: "3", Allowed: "a divisor of 32"}}
	var fe *FieldError
	if err := one.Err(); !errors.As(err, &fe) || fe.Field != "tp" {
		t.Errorf("one field error: Err() = %v, want the *FieldError for tp", err)
	}
	two := Errors{{Field: "tp", Value: "3"}, {Field: "batch", Value: "0"}}
	err := fmt.Errorf("model: %w", two.Err())
	got := Fields(err)
	if len(got) != 2 || got[0].Field != "tp" || got[1].Field != "batch" {
		t.Errorf("Fields(two joined, wrapped) = %v, want tp and batch", got)
	}
	if got := Fields(errors.New("plain")); got != nil {
		t.Errorf("Fields(plain error) = %v, want nil", got)
	}
}

func TestArgsString(t *testing.T) {
	var a Args
	a.Word("roofline")
	a.Add("op", "matmul m=4096 n=4096 k=4096 dtype=bf16")
	a.Add("devices", "h100,a100")
	a.Bool("datasheet", true)
	a.Bool("wide", false)
	a.Add("name", "it's")
	a.Add("empty", "")
	want := `gpucalc roofline --op 'matmul m=4096 n=4096 k=4096 dtype=bf16' --devices h100,a100 --datasheet --name 'it'\''s' --empty ''`
	if got := a.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}

func TestChanged(t *testing.T) {
	var a Args
	Changed(&a, "tp", int64(8), 1)
	Changed(&a, "batch", int64(1), 1)
	Changed(&a, "dtype", "fp16", "bf16")
	Changed(&a, "kv", "", "")
	Changed(&a, "rate", 2.5, 0)
	if got, want := a.String(), "gpucalc --tp 8 --dtype fp16 --rate 2.5"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

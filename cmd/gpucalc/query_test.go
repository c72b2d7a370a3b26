package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/sim"
	"github.com/gpucalc/gpucalc/train"
	"github.com/spf13/cobra"
)

// parsed runs a command built with runF on args and returns the options
// runF received: what the flags say, before any work.
func parsed[T any](t *testing.T, env string, build func(*factory, func(*T) error) *cobra.Command, args ...string) (*factory, *T) {
	t.Helper()
	f := &factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{},
		Getenv: func(k string) string {
			if k == "GPUCALC_DEVICE" {
				return env
			}
			return ""
		}}
	var got *T
	cmd := build(f, func(o *T) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return f, got
}

// TestFlagsToQuery: each command maps its flags onto its question's query
// type, field by field, and nothing else: left out, a flag is the query's
// default (NewQuery); --smem left out is the static part alone; a device
// not named is the environment's or the default.
func TestFlagsToQuery(t *testing.T) {
	named := func(n string) devices.Choice { return devices.Choice{Device: n, DeviceGiven: true} }
	t.Run("occupancy", func(t *testing.T) {
		want := occupancy.NewQuery()
		want.Device.Env = "a100"
		_, o := parsed(t, "a100", newCmdOccupancy)
		q, err := o.query()
		if err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		if !reflect.DeepEqual(q, want) {
			t.Errorf("no flags:\n  %+v\nwant the defaults\n  %+v", q, want)
		}
		_, o = parsed(t, "", newCmdOccupancy, "-d", "h200", "--threads", "512", "--regs", "64", "--smem", "100K", "--static-smem", "4K",
			"--carveout", "50%", "--barriers", "2", "--max-threads", "512", "--grid", "0", "--cluster", "4")
		if q, err = o.query(); err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		want = occupancy.Query{Device: named("h200"), Threads: 512, Regs: 64, Smem: "100K", StaticSmem: "4K", Carveout: "50%", Barriers: 2, MaxThreads: 512,
			Grid: 0, GridGiven: true, Cluster: 4, ClusterGiven: true}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("every flag:\n  %+v\nwant\n  %+v", q, want)
		}
		_, o = parsed(t, "", newCmdOccupancy, "--arch", "sm_80")
		if q, _ = o.query(); q.Arch != "sm_80" || q.Device.DeviceGiven {
			t.Errorf("--arch sm_80: arch %q, device %+v", q.Arch, q.Device)
		}
	})
	t.Run("roofline", func(t *testing.T) {
		f, o := parsed(t, "", newCmdRoofline, "--op", "copy n=1", "--op", "add n=2", "--devices", "h100,a100", "--l2", "warm", "--launch", "graph")
		f.datasheet = true
		q, err := o.query()
		if err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		want := roofline.Query{Ops: []string{"copy n=1", "add n=2"}, Devices: devices.Choice{Devices: []string{"h100", "a100"}, DevicesGiven: true}, Datasheet: true,
			L2: "warm", Launch: "graph"}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("got\n  %+v\nwant\n  %+v", q, want)
		}
	})
	t.Run("model", func(t *testing.T) {
		_, o := parsed(t, "", newCmdModel, "llama-3.1-8b")
		q, err := o.query()
		if err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		if want := model.NewQuery("llama-3.1-8b"); !reflect.DeepEqual(q, want) {
			t.Errorf("no flags:\n  %+v\nwant the defaults\n  %+v", q, want)
		}
		_, o = parsed(t, "", newCmdModel, "qwen3-8b", "--device", "h200", "--tp", "2", "--batch", "8", "--prompt", "512", "--ctx", "4096", "--gen", "64",
			"--dtype", "fp16", "--weights", "fp8", "--kv", "fp8", "--engine", "eager", "--full-cache", "--ops", "--fail-on", "no-fit", "--name", "q")
		if q, err = o.query(); err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		want := model.Query{Model: "qwen3-8b", Name: "q", Devices: named("h200"), TP: 2, Batch: 8, Prompt: 512, Ctx: 4096, Gen: 64,
			DType: "fp16", Weights: "fp8", KV: "fp8", Engine: "eager", FullCache: true, Ops: true, FailOn: "no-fit"}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("every flag:\n  %+v\nwant\n  %+v", q, want)
		}
	})
	t.Run("simulate", func(t *testing.T) {
		_, o := parsed(t, "", newCmdSimulate)
		q, err := o.query()
		if err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		if want := sim.NewQuery(); !reflect.DeepEqual(q, want) {
			t.Errorf("no flags:\n  %+v\nwant the defaults\n  %+v", q, want)
		}
		_, o = parsed(t, "", newCmdSimulate, "-d", "a100", "--kernel", "mixed", "--ilp", "2", "--flops-per-byte", "16", "--threads", "256", "--regs", "40",
			"--smem", "8K", "--warps-per-sm", "8,16", "--seed", "7")
		if q, err = o.query(); err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		want := sim.Query{Device: named("a100"), Kernel: "mixed", ILP: 2, FlopsPerByte: 16, FlopsGiven: true, Threads: 256, Regs: 40, Smem: "8K", Warps: "8,16", Seed: 7}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("every flag:\n  %+v\nwant\n  %+v", q, want)
		}
	})
	t.Run("train", func(t *testing.T) {
		_, o := parsed(t, "", newCmdTrain, "llama-3.2-1b")
		q, err := o.query()
		if err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		if want := train.NewQuery("llama-3.2-1b"); !reflect.DeepEqual(q, want) {
			t.Errorf("no flags:\n  %+v\nwant the defaults\n  %+v", q, want)
		}
		_, o = parsed(t, "", newCmdTrain, "llama-3.1-8b", "--devices", "h100,h200", "--method", "lora", "--precision", "bf16", "--optimizer", "sgd",
			"--ckpt", "full", "--batch", "4", "--seq", "4096", "--gpus", "8", "--tp", "2", "--zero", "1", "--bucket-view",
			"--lora-rank", "64", "--lora-alpha", "16", "--lora-targets", "q,v", "--name", "l")
		if q, err = o.query(); err != nil {
			t.Fatal(err)
		}
		q.Catalog = nil
		want := train.Query{Model: "llama-3.1-8b", Name: "l", Devices: devices.Choice{Devices: []string{"h100", "h200"}, DevicesGiven: true},
			Method: "lora", Precision: "bf16", Optimizer: "sgd", Ckpt: "full", Batch: 4, Seq: 4096, GPUs: 8, TP: 2, ZeRO: 1, BucketView: true,
			LoRARank: 64, LoRAAlpha: 16, LoRATargets: "q,v"}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("every flag:\n  %+v\nwant\n  %+v", q, want)
		}
	})
}

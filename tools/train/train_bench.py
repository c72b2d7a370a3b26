"""Measure one training step of Hugging Face causal LMs (random weights, sdpa) on one GPU.

For each model under models/ and each mode:
  bf16   model in bf16, fused AdamW (states in bf16): what torchtune-style full fine-tuning does
  mixed  fp32 master weights, bf16 autocast, fused AdamW in fp32: what a Trainer with bf16=True does
  lora   bf16 base frozen, LoRA r=16 alpha=32 on every linear projection (peft defaults otherwise)
with activation checkpointing off and on, over (batch, seq) shapes in rising token order. A step is
forward with labels (the model's own loss), backward, optimizer step, zero_grad(set_to_none=True).

Memory: torch.cuda.max_memory_allocated / max_memory_reserved over timed steps after a warm-up step
(optimizer states exist), and memory_allocated between steps (weights + optimizer states).
Time: CUDA events per phase, median of the timed steps.
After the first out-of-memory shape of a (model, mode, ckpt), larger shapes are recorded as 'skipped'.

usage: python3 train_bench.py OUT.csv MODEL[:MODES] ...   (MODES like bf16+lora; default all three)
MODELS_DIR names the folder of MODEL/config.json (default ./models; tools/models/assemble.sh builds one).
"""
import csv, os, statistics, sys, time, traceback

import torch
from transformers import AutoConfig, AutoModelForCausalLM

T0 = time.time()
BUDGET = float(os.environ.get("BUDGET_S", "480"))
HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [(1, 1024), (4, 512), (1, 4096), (4, 1024), (8, 1024), (4, 4096), (16, 2048), (8, 8192)]
COLS = ["gpu", "model", "params", "trainable_params", "mode", "ckpt", "batch", "seq", "status", "step_ms",
        "fwd_ms", "bwd_ms", "opt_ms", "tokens_per_s", "peak_alloc_bytes", "peak_reserved_bytes",
        "persistent_bytes", "weights_bytes", "torch", "transformers"]


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def build(name, mode):
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ.get("MODELS_DIR", os.path.join(HERE, "models")), name))
    dt = torch.float32 if mode == "mixed" else torch.bfloat16
    with torch.device("cuda"):
        try:
            m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
        except TypeError:
            m = AutoModelForCausalLM.from_config(cfg, torch_dtype=dt, attn_implementation="sdpa")
    m = m.to(dt)
    m.config.use_cache = False
    if mode == "lora":
        from peft import LoraConfig, get_peft_model
        m = get_peft_model(m, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, task_type="CAUSAL_LM",
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj",
                                                         "gate_proj", "up_proj", "down_proj"]))
    m.train()
    return cfg, m


def run(name, mode, rows, gpu, versions):
    cfg, m = build(name, mode)
    params = sum(p.numel() for p in m.parameters())
    trainable = [p for p in m.parameters() if p.requires_grad]
    weights_bytes = sum(p.numel() * p.element_size() for p in m.parameters())
    opt = torch.optim.AdamW(trainable, lr=1e-5, fused=True)
    for ckpt in (False, True):
        if ckpt:
            m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if mode == "lora":
                m.enable_input_require_grads()
        else:
            m.gradient_checkpointing_disable()
        oom = False
        for b, s in SHAPES:
            row = dict(gpu=gpu, model=name, params=params, trainable_params=sum(p.numel() for p in trainable),
                       mode=mode, ckpt=int(ckpt), batch=b, seq=s, weights_bytes=weights_bytes, **versions)
            if oom:
                rows.append(dict(row, status="skipped"))
                continue
            if time.time() - T0 > BUDGET:
                rows.append(dict(row, status="budget"))
                continue
            ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
            ev = lambda: torch.cuda.Event(enable_timing=True)

            def step(times=None):
                e = [ev() for _ in range(4)]
                e[0].record()
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "mixed")):
                    loss = m(input_ids=ids, labels=ids).loss
                e[1].record()
                loss.backward()
                e[2].record()
                opt.step()
                opt.zero_grad(set_to_none=True)
                e[3].record()
                if times is not None:
                    torch.cuda.synchronize()
                    times.append([e[i].elapsed_time(e[i + 1]) for i in range(3)])
            try:
                step()
                torch.cuda.synchronize()
                persistent = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                times = []
                for _ in range(3):
                    step(times)
                peak, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
                f, bw, o = (statistics.median(t[i] for t in times) for i in range(3))
                tot = statistics.median(sum(t) for t in times)
                rows.append(dict(row, status="ok", step_ms=round(tot, 4), fwd_ms=round(f, 4), bwd_ms=round(bw, 4),
                                 opt_ms=round(o, 4), tokens_per_s=round(b * s / tot * 1e3, 1), peak_alloc_bytes=peak,
                                 peak_reserved_bytes=reserved, persistent_bytes=persistent))
                log(name, mode, "ckpt" if ckpt else "", b, s, f"{tot:.1f} ms", f"peak {peak / 2**30:.2f} GiB")
            except torch.cuda.OutOfMemoryError:
                oom = True
                rows.append(dict(row, status="oom"))
                log(name, mode, "ckpt" if ckpt else "", b, s, "oom")
            finally:
                opt.zero_grad(set_to_none=True)
                del ids
                torch.cuda.empty_cache()
    del m, opt
    torch.cuda.empty_cache()


def main():
    out = sys.argv[1]
    import transformers
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}
    gpu = torch.cuda.get_device_name()
    rows = []
    for arg in sys.argv[2:]:
        name, _, modes = arg.partition(":")
        for mode in (modes.split("+") if modes else ["bf16", "mixed", "lora"]):
            try:
                run(name, mode, rows, gpu, versions)
            except Exception:
                traceback.print_exc()
            torch.cuda.empty_cache()
            with open(out, "w", newline="") as f:
                w = csv.DictWriter(f, COLS)
                w.writeheader()
                w.writerows(rows)
    log("done", len(rows), "rows")


if __name__ == "__main__":
    main()

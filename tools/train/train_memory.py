"""Where a training step's memory goes, phase by phase, for Hugging Face causal LMs (random weights, sdpa).

The same step as train_bench.py (forward with labels, backward, fused AdamW step, zero_grad(set_to_none)),
after one warm-up step so optimizer states exist. Per configuration it records, in bytes:
  persistent       memory_allocated() between steps (weights + optimizer states)
  fwd_peak         max_memory_allocated() during the forward (loss included)
  after_fwd        memory_allocated() after the forward: persistent + what autograd saved + the loss's buffers
  saved_bytes      distinct storages autograd saved for backward (saved_tensors_hooks), by bytes
  saved_params     of which parameters or their casts (storages also alive outside the graph's activations)
  logits_bytes     the bf16 (or autocast) logits tensor's bytes
  bwd_peak         max_memory_allocated() during backward
  after_bwd        memory_allocated() after backward (persistent + gradients)
  opt_peak         max_memory_allocated() during optimizer.step() and zero_grad
  step_peak        max over the step (what train_bench.py's peak_alloc_bytes reports)
usage: python3 train_memory.py OUT.csv   (MODELS_DIR: folder of MODEL/config.json)
"""
import csv, os, sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

MODELS = os.environ.get("MODELS_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
RUNS = [  # model, mode, ckpt, batch, seq
    ("llama-3.2-1b", "bf16", 0, 4, 1024), ("llama-3.2-1b", "bf16", 0, 1, 4096), ("llama-3.2-1b", "bf16", 1, 4, 1024),
    ("llama-3.2-1b", "mixed", 0, 4, 1024), ("llama-3.2-1b", "mixed", 1, 4, 1024),
    ("llama-3.2-1b", "lora", 0, 4, 1024), ("llama-3.2-1b", "lora", 1, 4, 1024),
    ("llama-3.2-3b", "bf16", 0, 2, 2048), ("llama-3.2-3b", "lora", 1, 2, 2048), ("llama-3.2-3b", "mixed", 0, 1, 2048),
    ("qwen2.5-1.5b", "bf16", 0, 4, 1024), ("qwen3-1.7b", "bf16", 0, 4, 1024),
]


def build(name, mode):
    cfg = AutoConfig.from_pretrained(os.path.join(MODELS, name))
    dt = torch.float32 if mode == "mixed" else torch.bfloat16
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
    m = m.to(dt)
    m.config.use_cache = False
    if mode == "lora":
        from peft import LoraConfig, get_peft_model
        m = get_peft_model(m, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, task_type="CAUSAL_LM",
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj",
                                                         "gate_proj", "up_proj", "down_proj"]))
    m.train()
    return cfg, m


def main():
    out = sys.argv[1]
    rows = []
    for name, mode, ckpt, b, s in RUNS:
        try:
            cfg, m = build(name, mode)
        except Exception as e:
            print("build failed", name, mode, repr(e)[:200], flush=True)
            continue
        if ckpt:
            m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            if mode == "lora":
                m.enable_input_require_grads()
        params = {p.untyped_storage().data_ptr() for p in m.parameters()}
        opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-5, fused=True)
        ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
        r = dict(model=name, mode=mode, ckpt=ckpt, batch=b, seq=s, gpu=torch.cuda.get_device_name())
        try:
            for it in range(2):
                saved = {}
                def pack(t):
                    st = t.untyped_storage()
                    saved[st.data_ptr()] = (st.nbytes(), st.data_ptr() in params)
                    return t
                torch.cuda.synchronize()
                if it == 1:
                    r["persistent"] = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "mixed")):
                        o = m(input_ids=ids, labels=ids)
                loss = o.loss
                if it == 1:
                    torch.cuda.synchronize()
                    r["fwd_peak"] = torch.cuda.max_memory_allocated()
                    r["after_fwd"] = torch.cuda.memory_allocated()
                    r["saved_bytes"] = sum(v[0] for v in saved.values())
                    r["saved_params"] = sum(v[0] for v in saved.values() if v[1])
                    r["logits_bytes"] = o.logits.numel() * o.logits.element_size()
                    r["logits_dtype"] = str(o.logits.dtype)
                    torch.cuda.reset_peak_memory_stats()
                del o
                loss.backward()
                if it == 1:
                    torch.cuda.synchronize()
                    r["bwd_peak"] = torch.cuda.max_memory_allocated()
                    r["after_bwd"] = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                opt.step()
                opt.zero_grad(set_to_none=True)
                del loss
                if it == 1:
                    torch.cuda.synchronize()
                    r["opt_peak"] = torch.cuda.max_memory_allocated()
            r["step_peak"] = max(r["fwd_peak"], r["bwd_peak"], r["opt_peak"])
            r["status"] = "ok"
        except torch.cuda.OutOfMemoryError:
            r["status"] = "oom"
        print(r, flush=True)
        rows.append(r)
        del m, opt, ids
        torch.cuda.empty_cache()
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()

"""Record the same PyTorch workloads as torch.profiler Chrome traces on whatever GPU this runs on.

Run on an H100 and on an H200 to get pairs: a trace taken on one GPU, and the measured truth on the other.
Each workload is warmed up, timed with CUDA events (median of 5 steps), then one step is profiled
(record_shapes, with_flops). Traces go to OUTDIR/NAME_GPU.json.gz; OUTDIR/steps_GPU.csv holds the wall
time per step and the summed kernel time of the profiled step.

usage: python3 trace_pairs.py OUTDIR [workload...]
"""
import csv, gzip, json, os, shutil, statistics, sys, time

import torch
from torch.profiler import profile, ProfilerActivity

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("MODELS_DIR", os.path.join(HERE, "models"))  # MODEL/config.json (tools/models/assemble.sh)
OUT = sys.argv[1]
ACT = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
GPU = "h200" if "H200" in torch.cuda.get_device_name() else "h100" if "H100" in torch.cuda.get_device_name() else "gpu"
T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def causal_lm(name, dtype=torch.bfloat16):
    from transformers import AutoConfig, AutoModelForCausalLM
    cfg = AutoConfig.from_pretrained(os.path.join(MODELS, name))
    with torch.device("cuda"):
        try:
            m = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation="sdpa")
        except TypeError:
            m = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype, attn_implementation="sdpa")
    return cfg, m.to(dtype)


def train_step(m, opt, fwd, autocast):
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = fwd()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def llama1b_infer():
    cfg, m = causal_lm("llama-3.2-1b")
    m.eval()
    ids = torch.randint(0, cfg.vocab_size, (1, 2048), device="cuda")
    return torch.inference_mode, lambda: m(input_ids=ids, use_cache=False, logits_to_keep=1), \
        "Llama-3.2-1B bf16 sdpa prefill, batch 1 x 2048 tokens, last-token logits"


def decode(name, b, ctx):
    from transformers import StaticCache
    cfg, m = causal_lm(name)
    m.eval()
    try:
        cache = StaticCache(config=cfg, max_cache_len=ctx + 64)
    except TypeError:
        cache = StaticCache(config=cfg, max_batch_size=b, max_cache_len=ctx + 64, device="cuda", dtype=torch.bfloat16)
    tok = torch.randint(0, cfg.vocab_size, (b, 1), device="cuda")
    with torch.inference_mode():  # fill the cache position range once so attention reads ctx tokens
        pre = torch.randint(0, cfg.vocab_size, (b, ctx), device="cuda")
        m(input_ids=pre, past_key_values=cache, use_cache=True, cache_position=torch.arange(ctx, device="cuda"),
          logits_to_keep=1)
    pos = torch.tensor([ctx], device="cuda")
    posid = torch.full((b, 1), ctx, device="cuda")

    def step():  # the same position every step: each step reads ctx cached tokens
        m(input_ids=tok, past_key_values=cache, use_cache=True, cache_position=pos, position_ids=posid)
    return torch.inference_mode, step, f"{name} bf16 sdpa eager decode step, batch {b}, {ctx} tokens of context (StaticCache)"


def qwen1p5b_decode_b32():
    return decode("qwen2.5-1.5b", 32, 2048)


def qwen1p5b_decode_b1():
    return decode("qwen2.5-1.5b", 1, 512)


def llama1b_train():
    cfg, m = causal_lm("llama-3.2-1b")
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (4, 1024), device="cuda")
    return torch.enable_grad, train_step(m, opt, lambda: m(input_ids=ids, labels=ids).loss, False), \
        "Llama-3.2-1B bf16 weights, training step batch 4 x 1024, loss, backward, fused AdamW"


def resnet50_train():
    import torchvision
    m = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(64, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (64,), device="cuda")
    lossf = torch.nn.CrossEntropyLoss()
    return torch.enable_grad, train_step(m, opt, lambda: lossf(m(x), y), True), \
        "torchvision ResNet-50, batch 64 x 3 x 224 x 224, channels_last, bf16 autocast, SGD momentum"


def vit_b16_train():
    import timm
    m = timm.create_model("vit_base_patch16_224", pretrained=False).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (64,), device="cuda")
    lossf = torch.nn.CrossEntropyLoss()
    return torch.enable_grad, train_step(m, opt, lambda: lossf(m(x), y), True), \
        "timm vit_base_patch16_224, batch 64, fp32 weights, bf16 autocast, fused AdamW"


def bert_base_train():
    from transformers import BertConfig, BertForMaskedLM
    with torch.device("cuda"):
        m = BertForMaskedLM(BertConfig(attn_implementation="sdpa"))
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, 30522, (32, 512), device="cuda")
    return torch.enable_grad, train_step(m, opt, lambda: m(input_ids=ids, labels=ids).loss, True), \
        "BERT-base masked LM (transformers BertConfig defaults), batch 32 x 512, fp32 weights, bf16 autocast, fused AdamW"


ALL = ["llama1b_infer", "llama1b_train", "resnet50_train", "vit_b16_train", "bert_base_train",
       "qwen1p5b_decode_b32", "qwen1p5b_decode_b1"]


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    for name in sys.argv[2:] or ALL:
        try:
            torch.manual_seed(0)
            ctx, step, note = globals()[name]()
            with ctx():
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
                ts = []
                for _ in range(5):
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    step()
                    b.record()
                    torch.cuda.synchronize()
                    ts.append(a.elapsed_time(b))
                with profile(activities=ACT, record_shapes=True, with_flops=True) as prof:
                    step()
                    torch.cuda.synchronize()
            p = f"/tmp/{name}_{GPU}.json"
            prof.export_chrome_trace(p)
            kern = sum(e.get("dur", 0) for e in json.load(open(p))["traceEvents"] if e.get("cat") == "kernel")
            with open(p, "rb") as f, gzip.open(os.path.join(OUT, f"{name}_{GPU}.json.gz"), "wb", 6) as g:
                shutil.copyfileobj(f, g)
            rows.append(dict(workload=name, gpu=torch.cuda.get_device_name(), step_ms=round(statistics.median(ts), 4),
                             step_ms_min=round(min(ts), 4), kernel_ms=round(kern / 1e3, 4), note=note))
            log(name, rows[-1])
        except Exception:
            import traceback
            traceback.print_exc()
        ctx = step = prof = None
        import gc
        gc.collect()
        torch.cuda.empty_cache()
        with open(os.path.join(OUT, f"steps_{GPU}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, ["workload", "gpu", "step_ms", "step_ms_min", "kernel_ms", "note"])
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()

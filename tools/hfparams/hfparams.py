"""Count the parameters Hugging Face transformers builds for each built-in config.

For every model/configs/*.json: AutoConfig from the file, then
AutoModelForCausalLM.from_config on the meta device (no memory, no weights) and
sum(p.numel() for p in model.parameters()), which counts a tied embedding once.
A `quantization_config` (DeepSeek-V3 publishes fp8 block scales) is removed
first so that the count is of the model's own weights, not of quantizer scales.
A multimodal config is counted for its text_config (the language model alone),
a Kimi-K2 text config (model_type kimi_k2, architectures DeepseekV3ForCausalLM)
with transformers' DeepseekV3 class, which it names.

usage: python3 hfparams.py CONFIG_DIR OUT_CSV
Writes name,model_type,params,transformers,torch.
"""
import csv, glob, json, os, sys, tempfile

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM


def count(path):
    c = json.load(open(path))
    model_type = c["model_type"]
    arch = (c.get("architectures") or [""])[0].replace("ForConditionalGeneration", "ForCausalLM")
    if "text_config" in c and "num_hidden_layers" not in c:
        c = c["text_config"]
    if c.get("model_type") == "kimi_k2":
        c["model_type"] = "deepseek_v3"
    c.pop("quantization_config", None)
    c.pop("auto_map", None)  # use transformers' own class, not remote code
    with tempfile.TemporaryDirectory() as d:
        json.dump(c, open(os.path.join(d, "config.json"), "w"))
        cfg = AutoConfig.from_pretrained(d)
    with torch.device("meta"):
        try:
            m = AutoModelForCausalLM.from_config(cfg)
        except ValueError:
            # a text config the auto mapping lacks: the causal-LM class its
            # multimodal architecture names
            m = getattr(transformers, arch)(cfg)
    parts = {}
    for name, p in m.named_parameters():
        key = ".".join(k for k in name.split(".") if not k.isdigit())
        parts[key] = parts.get(key, 0) + p.numel()
    for k in sorted(parts):
        print("  ", k, parts[k])
    return model_type, sum(p.numel() for p in m.parameters())


def main():
    src, out = sys.argv[1], sys.argv[2]
    rows = []
    for p in sorted(glob.glob(os.path.join(src, "*.json"))):
        name = os.path.basename(p)[:-5]
        try:
            mt, n = count(p)
        except Exception as e:  # one config's failure leaves the others counted
            print(name, "failed:", type(e).__name__, str(e)[:300], flush=True)
            continue
        print(name, mt, n, flush=True)
        rows.append(dict(name=name, model_type=mt, params=n,
                         transformers=transformers.__version__, torch=torch.__version__))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""make-golden.py - write the golden AutoModel benchmark logs of tests/data/amlog/ (run from that folder).

One case per seed-001 row: the rank-0 lines of nemo_automodel/recipes/llm/benchmark.py (Automodel
e45812012: setup l.152-181, iterations l.278-380, summary l.382-427; logger format
"%(asctime)s | %(levelname)s | %(name)s | %(message)s" from components/loggers/log_utils.py l.79-84;
timer blocks from components/training/timers.py l.393-410), with the row's published "Time per Global
Step" as the summary's average and per-iteration times around it.  The step TFLOPs are computed here
with the flops_utils.py formulas written out again in Python (independently of nemoperf's C), so the
parse test compares nemoperf against the publication, not against itself.  Odd cases are written as
two files (<name>.out = stdout, <name>.err = stderr, as slurm.sub does), even cases merged in one.
"""
import json, os

def llama(B,S,L,h,A,G,F,V): return B*S*L*h*h*(12+12*G/A+18*F/h+6*S/h+6*V/(L*h))
def qwen3(B,S,L,h,A,G,hd,F,k,V):
    r=hd*A/h
    return 6*B*L*S*h*h*r*((2*G/A+1)+S/h+1)+6*B*L*S*h*3*F*k+6*B*S*h*V
def dsv3(B,S,L,h,A,ql,kvl,nope,rope,v,Fm,k,V):
    att=6*L*(0.5*(nope+rope)*A*S*S+0.5*v*A*S*S)
    mla=h*ql+ql*(nope+rope)*A+h*rope+h*kvl+kvl*(nope+v)*A+v*A*h
    return B*(att+6*S*(L*mla+L*3*h*Fm*(1+k))+6*S*h*V)
def gptoss(B,S,L,h,A,G,F,k,V,w=128):
    c=h//A; t=0
    for i in range(L):
        nz=S*(S+1)/2 if i%2==0 else w*(w+1)/2+(S-w)*w
        t+=6*(S*h*c*(A+2*G)+S*h*c*A+A*nz*c*2)+6*(S*k*h*F*2+S*k*F*h)
    return B*(t+6*S*h*V)
def nemh(B,S,h,V,na,nm,ne,A,G,mh,mhd,N,g,k,Fm,Fs,nr,lat=None):
    din=mh*mhd; e=lat or h
    moe=6*B*S*k*e*Fm*2+6*B*S*h*Fs*2+6*B*S*h*nr+(6*B*S*h*lat*2 if lat else 0)
    return (6*B*S*h*V+na*6*B*S*h*(h+2*h*G/A+S+h)
            +nm*(6*B*S*h*(2*din+2*g*N+mh)+6*B*S*din*N+6*B*S*din*h)+ne*moe)
def lora(L,h,A,G,F,V,bias=False,r=16):
    hd=h//A; lin=[(h,A*hd),(h,G*hd),(h,G*hd),(A*hd,h),(h,F),(h,F),(F,h)]
    tot=L*(sum(i*o for i,o in lin)+(A*hd+2*G*hd if bias else 0)+2*h)+2*V*h+h
    lp=L*sum(r*(i+o) for i,o in lin)+r*(h+V)
    return lp, tot

# (config, gpus, gbs, lbs, dp, seq, published step, step flops, lora (params, frozen) or None)
L70=(80,8192,64,8,28672,128256); Q32=(64,5120,40,8,27648,152064)
ROWS=[
 ("nemotron_super_v3_te_deepep",64,512,2,64,4096,7.286,nemh(512,4096,4096,131072,8,40,40,32,2,128,64,128,8,22,2688,5376,512,1024),None),
 ("nemotron_nano_v3_te_deepep",8,512,4,8,4096,15.614,nemh(512,4096,2688,131072,6,23,23,32,2,64,64,128,8,6,1856,3712,128),None),
 ("deepseek_v3_te_deepep",1024,8192,8,256,4096,37.87,dsv3(8192,4096,61,7168,128,1536,512,128,64,128,2048,8,129280),None),
 ("deepseek_v3_te_deepep",256,512,8,64,4096,8.18,dsv3(512,4096,61,7168,128,1536,512,128,64,128,2048,8,129280),None),
 ("kimi_k2_te_deepep",256,512,8,32,4096,8.86,dsv3(512,4096,61,7168,64,1536,512,128,64,128,2048,8,163840),None),
 ("qwen3_moe_30b_te_deepep",8,512,4,8,4096,21.773,qwen3(512,4096,48,2048,32,4,128,768,8,151936),None),
 ("gptoss_20b_te_deepep",8,256,2,8,4096,10.04,gptoss(256,4096,24,2880,64,8,2880,4,201088),None),
 ("gptoss_120b_te_deepep",64,512,2,64,4096,4.30,gptoss(512,4096,36,2880,64,8,2880,4,201088),None),
 ("custom_llama3_1_70b_pretrain_benchmark_8nodes",64,128,1,32,8192,18.90,llama(128,8192,*L70),None),
 ("llama3_1_8b_peft_benchmark",1,32,2,1,4096,10.51,llama(32,4096,32,4096,32,8,14336,128256),lora(32,4096,32,8,14336,128256)),
 ("qwen2_5_7b_peft_benchmark",1,32,2,1,4096,9.29,qwen3(32,4096,28,3584,28,4,128,18944,1,152064),lora(28,3584,28,4,18944,152064,True)),
 ("custom_llama3_3_70b_instruct_peft_benchmark",8,32,2,4,4096,15.00,llama(32,4096,*L70),lora(*L70)),
 ("custom_qwen2_5_32b_peft_benchmark",8,32,2,4,4096,7.28,qwen3(32,4096,64,5120,40,8,128,27648,1,152064),lora(*Q32,True)),
 ("custom_llama3_3_70b_instruct_peft_benchmark_2nodes",16,32,2,8,4096,8.32,llama(32,4096,*L70),lora(*L70)),
 ("custom_qwen2_5_32b_peft_benchmark_2nodes",16,32,2,8,4096,3.95,qwen3(32,4096,64,5120,40,8,128,27648,1,152064),lora(*Q32,True)),
]

def write(idx,cfg,gpus,gbs,lbs,dp,seq,step,flops,lo):
    moe = lo is None and "peft" not in cfg and "llama3_1_70b" not in cfg
    warm, steps = (10, 30) if moe else (5, 10)
    ga = gbs // (lbs * dp)
    tflops = flops / 1e12
    case = f"{cfg}_{gpus}"
    os.makedirs(case, exist_ok=True)
    out, err = [], []
    t = [0]
    def log(msg):
        t[0] += 1
        err.append(f"2026-04-17 10:{t[0]//60 % 60:02d}:{t[0] % 60:02d} | INFO | __main__ | {msg}")
    log(f"Using batch_size={lbs} from step_scheduler.local_batch_size")
    if lo:
        lp, fr = lo; ratio = lp / fr; m = (2 + ratio) / 3
        tflops *= m
        log(f"PEFT params - lora_params: {lp:,}, frozen_params: {fr:,}, param_ratio (lora/frozen): {ratio:.4f}")
        log(f"TFLOPS multiplier for PEFT: (2 + {ratio:.4f}) / 3 = {m:.4f}")
    log(f"TFLOPs/GPU: {tflops:.6f}")
    out.append("(min, max) time across ranks (ms):")
    out.append("    {}: ({:.2f}, {:.2f})".format("setup ".ljust(48, "."), 95.1, 96.4))
    log(f"Running {steps} iterations with {warm} warmup steps")
    log(f"GA steps: {ga}, DP size: {dp}, Local batch size: {lbs}, Global batch size: {gbs}")
    timed = steps - warm
    # post-warm-up times symmetric around the published step, so their mean is exactly it
    deltas = [((i % 5) - 2) * 0.004 * step for i in range(timed)]
    if sum(deltas) != 0:
        deltas[-1] -= sum(deltas)
    warm_total = 0.0
    for i in range(steps):
        x = step * (1.8 if i == 0 else 1.05) if i < warm else step + deltas[i - warm]
        if i < warm: warm_total += x
        mfu = tflops / gpus / x / 989 * 100
        loss = 12.0 - 0.05 * i
        name = "iteration_warmup" if i < warm else "iteration"
        log(f"Rank 0 | Iteration {i}")
        out.append(f"num_label_tokens={gbs*(seq-1)} | loss={loss:.4f}")
        log(f"Rank 0 | Iteration {i} | num_label_tokens={gbs*(seq-1)} | Max Memory Allocated: {61.23 + i*0.01:.2f} GB | loss={loss:.4f}")
        log(f"Max iter time: {x:.6f} seconds")
        log(f"MFU: {mfu:.6f}%")
        out.append("(min, max) time across ranks (ms):")
        out.append("    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), x * 0.998, x))
        out.append("    {}: ({:.2f}, {:.2f})".format("optimizer ".ljust(48, "."), 0.05, 0.06))
        for g in range(ga):
            out.append("    {}: ({:.2f}, {:.2f})".format(f"forward_backward_{g} ".ljust(48, "."), x / ga * 0.99, x / ga))
    avg = step
    log("=" * 60); log("Benchmarking Summary"); log("=" * 60)
    log("Total setup time: 96.40 seconds")
    log(f"Total warmup time ({warm} steps): {warm_total:.2f} seconds")
    log(f"Total iteration time ({timed} steps): {avg*timed:.2f} seconds")
    log(f"Average iteration time: {avg:.3f} seconds (excluding first {warm} warmup iterations)")
    log(f"Average MFU: {tflops / gpus / avg / 989 * 100:.6f}% (excluding first {warm} warmup iterations)")
    log("=" * 60 + "\n")
    name = f"automodel_{cfg}_{gpus}"
    if idx % 2:
        open(f"{case}/{name}.out", "w").write("\n".join(out) + "\n")
        open(f"{case}/{name}.err", "w").write("\n".join(err) + "\n")
    else:  # merged (2>&1): the stderr lines come where Python wrote them; interleave per iteration
        open(f"{case}/{name}.out", "w").write("\n".join(err[:8] + out + err[8:]) + "\n")
    json.dump({"config": {"recipe": "automodel", "model_size": cfg, "dtype": "bf16", "gpu_type": "h100",
                          "gpus": gpus, "seq_len": seq, "gbs": gbs, "max_steps": steps}},
              open(f"{case}/nemoperf.json", "w"), indent=2)

for i, r in enumerate(ROWS):
    write(i, *r)

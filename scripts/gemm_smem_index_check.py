#!/usr/bin/env python3
"""Replays the index arithmetic of examples/shaders/coopmat/gemm_coopmat_smem.comp on the CPU
(numpy): every invocation's uvec4 copies global -> registers -> shared memory, the double
buffer, and each subgroup's coopMatLoad from the uvec4 arrays (offset and stride in uvec4
units, 8 16-bit elements each), for every shape in examples/common/gemm.rs SMEM_SHAPES, with
STREAM on and off and the grouped workgroup order (GROUP 1 and 2 over 3 tile rows: the
last group partial) and the loads two steps ahead (AHEAD 2, odd and even step counts) and the no-global loop
with loads from two cached slices (PART 3), against A.B (or (K/BK).A[:, :BK].B[:BK, :]). It checks the addressing
only (sequentially: not barriers, not the driver), the part of the kernel that lavapipe,
which has no cooperative matrices, cannot run. Prints max error and unwritten elements per
shape (both 0 when right). Usage: python3 scripts/gemm_smem_index_check.py
"""
import numpy as np
def run(M,N,K,BM,BN,BK,WM,WN,SG=32,l=(16,16,16),stream=True,GROUP=1,AHEAD=1,CACHED=False):
    lM,lN,lK=l
    rng=np.random.default_rng(1)
    A=rng.integers(-4,5,(M,K)).astype(np.float64); B=rng.integers(-4,5,(K,N)).astype(np.float64)
    a=A.reshape(-1,8); b=B.reshape(-1,8)  # uvec4 arrays (8 halves each)
    AV=BK//8; BV=BN//8; AS=AV+1; BS=BV+1
    nsg=(BM//WM)*(BN//WN); WG=nsg*SG
    AL=BM*AV//WG; BL=BK*BV//WG; assert BM*AV%WG==0 and BK*BV%WG==0
    FM=WM//lM; FN=WN//lN; SN=BN//WN
    C=np.full((M,N),np.nan)
    tilesN=N//BN
    for wg in range((M//BM)*(N//BN)):
        # grouped order (spec constant 10, GROUP; 1 is row-major)
        per=GROUP*tilesN; first=(wg//per)*GROUP; gm=min(M//BM-first,GROUP); ing=wg%per
        m0=(first+ing%gm)*BM; n0=(ing//gm)*BN; kv=K//8; nv=N//8
        as_=np.full((2*BM*AS,8),np.nan); bs_=np.full((2*BK*BS,8),np.nan)
        def gload(s):
            ra={};rb={}
            for tid in range(WG):
                for i in range(AL):
                    e=tid+i*WG; ra[tid,i]=a[(m0+e//AV)*kv+s*AV+e%AV]
                for i in range(BL):
                    e=tid+i*WG; rb[tid,i]=b[(s*BK+e//BV)*nv+n0//8+e%BV]
            return ra,rb
        def sstore(buf,ra,rb):
            for tid in range(WG):
                for i in range(AL):
                    e=tid+i*WG; as_[buf*BM*AS+(e//AV)*AS+e%AV]=ra[tid,i]
                for i in range(BL):
                    e=tid+i*WG; bs_[buf*BK*BS+(e//BV)*BS+e%BV]=rb[tid,i]
        ra,rb=gload(0); sstore(0,ra,rb)
        acc={sg:[np.zeros((lM,lN)) for _ in range(FM*FN)] for sg in range(nsg)}
        steps=K//BK
        flatA=as_.reshape(-1); flatB=bs_.reshape(-1)
        def mma(cur):
            for sg in range(nsg):
                wm=(sg//SN)*WM; wn=(sg%SN)*WN
                for kk in range(0,BK,lK):
                    fa=[];fb=[]
                    for i in range(FM):
                        off=cur*BM*AS+(wm+i*lM)*AS+kk//8
                        fa.append(np.array([[flatA[(off+r*AS)*8+c] for c in range(lK)] for r in range(lM)]))
                    for j in range(FN):
                        off=cur*BK*BS+kk*BS+(wn+j*lN)//8
                        fb.append(np.array([[flatB[(off+r*BS)*8+c] for c in range(lN)] for r in range(lK)]))
                    for i in range(FM):
                        for j in range(FN): acc[sg][i*FN+j]+=fa[i]@fb[j]
        if AHEAD==2 and stream:
            # two register sets: step s+2 loaded at step s into set s&1, step s+1's set
            # (s+1)&1 stored into buffer (s+1)&1 after the multiply-adds of step s
            regs=[(ra,rb),gload(1) if steps>1 else None]
            for s in range(steps):
                if s+2<steps: regs[s&1]=gload(s+2)
                mma(s&1)
                if s+1<steps: sstore((s+1)&1,*regs[(s+1)&1])
        else:
            for s in range(steps):
                loads=stream or CACHED
                cur=(s&1) if loads else 0; more=loads and s+1<steps
                if more: ra,rb=gload((s+1)&1 if CACHED else s+1)
                mma(cur)
                if more: sstore(cur^1,ra,rb)
        for sg in range(nsg):
            wm=(sg//SN)*WM; wn=(sg%SN)*WN
            for i in range(FM):
                for j in range(FN):
                    r0=m0+wm+i*lM; c0=n0+wn+j*lN
                    C[r0:r0+lM,c0:c0+lN]=acc[sg][i*FN+j]
    want=A@B if stream else (K//BK)*(A[:,:BK]@B[:BK,:])
    if CACHED: want=(K//(2*BK))*(A[:,:2*BK]@B[:2*BK,:])
    return np.nanmax(np.abs(C-want)), np.isnan(C).sum()
for shape in [(128,128,32,64,32),(128,128,32,64,64),(128,256,16,64,64),(256,128,16,64,64),(128,64,32,64,32)]:
    BM,BN,BK,WM,WN=shape
    M,N,K=max(256,BM*2)//1,BN*2,BK*3
    for st in (True,False):
        print(shape,st,run(M,N,K,*shape,stream=st))
    print(shape,"grouped by 2 over 3 tile rows",run(BM*3,BN*2,BK*3,*shape,GROUP=2))
    print(shape,"PART 3 (two cached slices), 6 steps",run(BM*2,BN,BK*6,*shape,stream=False,CACHED=True))
    for steps in (1,2,5,6):
        print(shape,"AHEAD 2,",steps,"steps",run(BM*2,BN,BK*steps,*shape,AHEAD=2))

#!/usr/bin/env python3
"""What the manual clock costs a harness (docs/PERFORMANCE.md): the wall time of
clock.advance with the stream running, and of a clicking tab.select (which waits for
the audio thread to take the voice). Usage: measure-advance.py TABBARD SOUNDS_DIR"""
import socket, json, subprocess, time, os, sys, tempfile
d=tempfile.mkdtemp(); B=sys.argv[1]
p=subprocess.Popen([B,"--socket",d+"/s","--state",d+"/st.json","--audio","null","--clock","manual","--capture",d+"/c.wav","--sounds",sys.argv[2]],stderr=subprocess.DEVNULL)
while not os.path.exists(d+"/s"): time.sleep(0.02)
s=socket.socket(socket.AF_UNIX); s.connect(d+"/s"); f=s.makefile("rwb"); f.readline()
n=[0]
def call(m,pa={}):
    n[0]+=1; f.write((json.dumps({"jsonrpc":"2.0","id":n[0],"method":m,"params":pa})+"\n").encode()); f.flush()
    while True:
        l=json.loads(f.readline())
        if l.get("id")==n[0]: return l
call("sound.play",{"name":"click"})
t=time.perf_counter(); call("clock.advance",{"ms":60000}); a=time.perf_counter()-t
t=time.perf_counter()
for i in range(1000): call("clock.advance",{"ms":1})
b=(time.perf_counter()-t)/1000
t=time.perf_counter()
for i in range(200): call("tab.select",{"tab":"me" if i%2 else "home"}); 
c=(time.perf_counter()-t)/200
print("advance 60 s: %.1f ms; advance 1 ms: %.0f us each; click select (settle): %.0f us each"%(a*1000,b*1e6,c*1e6))
p.terminate(); p.wait()
import shutil; shutil.rmtree(d)

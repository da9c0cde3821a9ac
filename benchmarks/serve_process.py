"""A `llmesh serve` process for the benchmark scripts: started on a free
loopback port, ready once /health answers 200, stopped on request.
Standard library only."""
import http.client
import json
import socket
import subprocess
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class ServerProcess:
    def __init__(self, binary, model, threads, extra=(), ready_timeout_s=600):
        self.port = free_port()
        self.start([binary, "serve", "--model", model, "--host", "127.0.0.1", "--port", str(self.port),
                    "--threads", str(threads), *extra], ready_timeout_s)

    def start(self, cmd, ready_timeout_s):
        """Runs cmd (which serves on self.port) until /health answers 200; sets model_name."""
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + ready_timeout_s
        while time.time() < deadline:
            try:
                if self.get("/health")[0] == 200:
                    self.model_name = json.loads(self.get("/v1/models")[1])["data"][0]["id"]
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited during startup")
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{cmd[0]} did not become ready")

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()

    def post(self, path, body):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        return r.status, r.read()

    def stop(self, timeout_s=10):
        self.proc.terminate()
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

# simple_switch_CLI on several switches from one Python process (bmv2.ts, Switch.load): what
# `simple_switch_CLI --thrift-port PORT < commands` does for each (sswitch_CLI.main: connect,
# fetch the switch's JSON, then the commands through SimpleSwitchAPI's command loop), without
# importing the CLI's modules once per switch (about 0.2 s of CPU each, most of a CLI run).
# Reads lines from stdin, each a JSON list of {"port", "commands"}; for each line, writes one line on stdout: a JSON
# list of each job's output, as the CLI would have printed it (an exception's traceback, and where the CLI would have
# exited, as when it cannot connect or fetch the JSON, "Error: simple_switch_CLI exited N"). It serves one test
# process's loads until stdin ends, so its imports are paid once per process, not once per load.
import io, json, sys, traceback


class Sink:
    """Where print() and the CLI's modules write (they keep sys.stdout as it was at import): the current job's text."""

    def __init__(self):
        self.to = io.StringIO()

    def write(self, s):
        return self.to.write(s)

    def flush(self):
        pass


out, sink = sys.stdout, Sink()
sys.stdout = sys.stderr = sink
import runtime_CLI, sswitch_CLI  # noqa: E402 (after the sink: they bind sys.stdout when imported)

def run(job):
    """One switch's commands, as `simple_switch_CLI --thrift-port PORT < commands` runs them: the CLI's output."""
    sink.to = io.StringIO()
    standard = None
    try:
        pre = runtime_CLI.PreType.SimplePreLAG
        services = runtime_CLI.RuntimeAPI.get_thrift_services(pre)
        services.extend(sswitch_CLI.SimpleSwitchAPI.get_thrift_services())
        standard, mc, sswitch = runtime_CLI.thrift_connect("localhost", job["port"], services)
        runtime_CLI.load_json_config(standard, None)
        api = sswitch_CLI.SimpleSwitchAPI(pre, standard, mc, sswitch)
        api.stdin, api.use_rawinput = io.StringIO(job["commands"]), False
        api.cmdloop()
    except SystemExit as e:
        print(f"Error: simple_switch_CLI exited {e.code}")
    except Exception:
        traceback.print_exc(file=sink)
    finally:
        # The connection ends with the job (a CLI process would have exited), not when the process does.
        if standard is not None:
            try:
                standard._iprot.trans.close()
            except Exception:
                pass
    return sink.to.getvalue()


for line in sys.stdin:
    if line.strip() != "":
        out.write(json.dumps([run(job) for job in json.loads(line)]) + "\n")
        out.flush()

"""iot: placeholder until the full simulator lands (raises)."""

from tsbench.workload.generate.simulator import Simulator


class Iot(Simulator):
    use_case_name = "iot"

    def entity_tags(self):
        raise NotImplementedError

    def simulate(self, chunk):
        raise NotImplementedError

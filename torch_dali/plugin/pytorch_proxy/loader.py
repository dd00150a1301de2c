"""proxy.DataLoader: torch's DataLoader whose batches come back with the pipeline's outputs in
place of the batch references; it starts its DALIServer when a batch is asked for and the server
is not running. Unlike DALI 2.4's, it also takes num_workers=0 (the main process collates) and
spawned workers (the proxy is picklable)."""
from __future__ import annotations

from typing import Any

from torch.utils.data import DataLoader as TorchDataLoader

from .server import DALIServer


class _Batches:
    """torch's batch iterator, each batch's references replaced by the pipeline's outputs (a
    wrapper, not a subclass of torch's private iterator classes)."""

    def __init__(self, loader: "DataLoader", batches: Any) -> None:
        self._loader = loader
        self._batches = batches

    def __iter__(self) -> "_Batches":
        return self

    def __len__(self) -> int:
        return len(self._batches)

    def __next__(self) -> Any:
        self._loader.ensure_server_listening()
        return self._loader.dali_server.produce_data(next(self._batches))


class DataLoader(TorchDataLoader):
    """torch.utils.data.DataLoader's arguments, after the DALIServer whose proxy the dataset calls."""

    def __init__(self, dali_server: DALIServer, *args: Any, **kwargs: Any) -> None:
        if not isinstance(dali_server, DALIServer):
            raise TypeError(f"proxy.DataLoader: the first argument must be a DALIServer, got "
                            f"{type(dali_server).__name__}")
        super().__init__(*args, **kwargs)
        self.dali_server = dali_server
        self.server_started_by_loader = False
        self._started: Any = None  # the server thread this loader started

    def ensure_server_listening(self) -> None:
        if not self.dali_server.is_thread_running():
            self.dali_server.start_thread()
            self.server_started_by_loader = True
            self._started = self.dali_server.running_thread()

    def __iter__(self) -> Any:
        return _Batches(self, super().__iter__())

    def __del__(self) -> None:
        server = self.__dict__.get("dali_server")
        # only the thread this loader started: the server may have been stopped and started again
        # by another loader since (a loader collected late must not stop that one's thread)
        started = self.__dict__.get("_started")
        if started is not None and server is not None and server.running_thread() is started:
            server.stop_thread()

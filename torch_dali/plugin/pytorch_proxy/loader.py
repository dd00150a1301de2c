"""proxy.DataLoader: torch's DataLoader whose batches come back with the pipeline's outputs in
place of the batch references; it starts its DALIServer when a batch is asked for and the server
is not running. Unlike DALI 2.4's, it also takes num_workers=0 (the main process collates) and
spawned workers (the proxy is picklable)."""
from __future__ import annotations

from typing import Any

from torch.utils.data import dataloader as _dl

from .server import DALIServer


class _ProduceData:
    """The iterators' common step: torch's batch, its references replaced."""

    _proxy_loader: "DataLoader"

    def _next_data(self) -> Any:
        loader = self._proxy_loader
        loader.ensure_server_listening()
        return loader.dali_server.produce_data(super()._next_data())  # type: ignore[misc]


class _SingleProcessIter(_ProduceData, _dl._SingleProcessDataLoaderIter):
    def __init__(self, loader: "DataLoader") -> None:
        self._proxy_loader = loader
        super().__init__(loader)


class _MultiProcessIter(_ProduceData, _dl._MultiProcessingDataLoaderIter):
    def __init__(self, loader: "DataLoader") -> None:
        self._proxy_loader = loader
        super().__init__(loader)


class DataLoader(_dl.DataLoader):
    """torch.utils.data.DataLoader's arguments, after the DALIServer whose proxy the dataset calls."""

    def __init__(self, dali_server: DALIServer, *args: Any, **kwargs: Any) -> None:
        if not isinstance(dali_server, DALIServer):
            raise TypeError(f"proxy.DataLoader: the first argument must be a DALIServer, got "
                            f"{type(dali_server).__name__}")
        super().__init__(*args, **kwargs)
        self.dali_server = dali_server
        self.server_started_by_loader = False

    def ensure_server_listening(self) -> None:
        if not self.dali_server._is_thread_running():
            self.dali_server.start_thread()
            self.server_started_by_loader = True

    def _get_iterator(self) -> Any:
        return _MultiProcessIter(self) if self.num_workers > 0 else _SingleProcessIter(self)

    def __del__(self) -> None:
        server = self.__dict__.get("dali_server")
        if self.__dict__.get("server_started_by_loader") and server is not None:
            server.stop_thread()

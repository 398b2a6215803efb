"""The stud poker server: HTTP and websockets around the pure engine."""

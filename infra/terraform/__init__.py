"""Terraform's side: the runner of the real ``terraform``/``tofu`` binary, what a saved plan would do on AWS
(``rollout``), one plan session's files and lock, and the files a synthesis writes (``outputs``)."""

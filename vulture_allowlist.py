"""Names vulture (`make test`) reports as unused that are used where it cannot see: by a framework
(rich, click, pydantic, jsii, pytest), through getattr, or by the Terraform JSON a dataclass is written as.
Each line uses one such name; a name that becomes truly unused is deleted from the code and from here."""

# ruff: noqa
_.no_wrap  # rich's Column attributes, set on a table's columns (cli/common.py)
_.overflow
_.format_commands  # click.Group's hook (cli/main.py)
_.on_broken_pipe  # rich's Console hook, replaced (cli/output.py)
_.price_basis  # fields of the instance catalog's JSON document, kept so its schema checks them
_.excluded_families
_.last_modified_time  # moto's endpoint attribute, which its answers read (infra/project/emulator.py)
_.instances_desired  # a field of the explain model, filled from DescribeEndpoint
_._synthesize_attributes  # the CDK engine's override hook (stacks/engine_stack.py)
_.skip_credentials_validation  # the aws provider block's attributes, written into cdk.tf.json
_.access_key
_.secret_key
_.skip_requesting_account_id
_.skip_metadata_api_check
_.s3_use_path_style
_.max_retries
_.create_before_destroy  # Terraform lifecycle attributes, written into cdk.tf.json
_.ignore_changes
_.replace_triggered_by
CONFUSED_DEPUTY_DOC  # the source the role's docstrings cite
__getattr__  # module-level attribute hook (stacks/testing/__init__.py)
exc_type  # __exit__'s signature
tb
_.do_POST  # http.server hooks in the tests
_.do_GET
_.do_PUT
_.do_DELETE
_.do_HEAD
_.protocol_version
_.daemon_threads
_.log_message
_.visit  # ast.NodeVisitor hook (tests)
read1  # a file-like object's method a test fakes
_.itl  # a closed-loop result's metrics, read by name (LoadTestResult.get) in the benchmark checks
_.output_tokens_per_second
pytest_collection_modifyitems  # pytest hooks (tests/conftest.py)
pytest_runtest_logreport
pytest_sessionstart
pytest_collection_finish
pytest_terminal_summary
pytest_configure

"""The typer app of ``python -m experiments``: it imports the study and
benchmark modules and registers their commands (they never import this one)."""

import typer

from .active_learning.study import active_learning_study
from .bench.apply import bench_apply
from .bench.cold_start import bench_cold_start
from .bench.dgm import bench
from .bench.nested import bench_nested
from .bench.pipeline_speed import bench_pipelines
from .bench.stages import bench_stages
from .bench.structures import bench_structures
from .bench.types import bench_types
from .confidence.study import confidence
from .configs.compose import configs_command
from .dgm.jackknife_trees import jackknife
from .dgm.study import study
from .nested.study import nested_study
from .packaging.pipelines import package_pipeline
from .partial.study import partial_study
from .pretrain.tok2vec import pretrain
from .publish.results import publish_results
from .transformers.report import transformer_report_command
from .two_stage.pretrained import pretrained_first_stage
from .two_stage.study import two_stage

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="The studies and benchmarks of spacy-depner's project.yml"
)
app.add_typer(study, name="study")
app.add_typer(nested_study, name="nested-study")
app.add_typer(two_stage, name="two-stage")
app.add_typer(pretrained_first_stage, name="pretrained-first-stage")
app.command("bench")(bench)
app.command("bench-nested")(bench_nested)
app.command("bench-apply")(bench_apply)
app.command("bench-cold-start")(bench_cold_start)
app.command("bench-types")(bench_types)
app.command("bench-stages")(bench_stages)
app.command("bench-pipelines")(bench_pipelines)
app.command("bench-structures")(bench_structures)
app.command("configs")(configs_command)
app.command("jackknife-trees")(jackknife)
app.command("pretrain")(pretrain)
app.command("package")(package_pipeline)
app.command("partial-study")(partial_study)
app.command("active-learning-study")(active_learning_study)
app.command("confidence")(confidence)
app.command("transformer-report")(transformer_report_command)
app.command("publish-results")(publish_results)

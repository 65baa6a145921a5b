"""The typer app of ``python -m experiments``: it imports the study and
benchmark modules and registers their commands (they never import this one)."""
import typer

from . import (active_learning_study, bench_dgm, bench_nested, bench_stages, bench_structures, bench_types, configs, confidence_study, dgm_study, jackknife_trees, nested_study, package_pipelines,
               partial_study, pretrain, publish_results, transformer_report, two_stage_study)

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="The studies and benchmarks of spacy-depner's project.yml")
app.add_typer(dgm_study.study, name="study")
app.add_typer(nested_study.nested_study, name="nested-study")
app.add_typer(two_stage_study.two_stage, name="two-stage")
app.command("bench")(bench_dgm.bench)
app.command("bench-nested")(bench_nested.bench_nested)
app.command("bench-types")(bench_types.bench_types)
app.command("bench-stages")(bench_stages.bench_stages)
app.command("bench-structures")(bench_structures.bench_structures)
app.command("configs")(configs.configs_command)
app.command("jackknife-trees")(jackknife_trees.jackknife)
app.command("pretrain")(pretrain.pretrain)
app.command("package")(package_pipelines.package_pipeline)
app.command("partial-study")(partial_study.partial_study)
app.command("active-learning-study")(active_learning_study.active_learning_study)
app.command("confidence")(confidence_study.confidence)
app.command("transformer-report")(transformer_report.transformer_report_command)
app.command("publish-results")(publish_results.publish_results)

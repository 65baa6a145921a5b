"""The span-based nested mention CRFs of Corro (2023): ``structure.NESTED``."""

"""The types a value that takes substitutions may have."""

from typing import Iterable, Text, Union

from kairos.launch._core import Substitution

SomeSubstitutionsType = Union[Text, Substitution, Iterable[Union[Text, Substitution]]]
SomeSubstitutionsType_types_tuple = (str, Substitution)

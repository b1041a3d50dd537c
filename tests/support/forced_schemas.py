"""Tool schemas people really send ($ref/$defs, unions, formats, bounds), and a bare prompt template for forced runs."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from callscope.engine.templates.chat import ChatTemplate

ADDRESS = {
    "properties": {
        "street": {"title": "Street", "type": "string"},
        "city": {"title": "City", "type": "string"},
    },
    "required": ["street", "city"],
    "title": "Address",
    "type": "object",
}


#: name -> parameters schema, each the shape a real client sends.
SCHEMAS: dict[str, dict] = {
    "enum": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
    },
    "any_of": {
        "type": "object",
        "properties": {"target": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
        "required": ["target"],
    },
    "ref_defs": {
        "type": "object",
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"]}},
        "properties": {"unit": {"$ref": "#/$defs/Unit"}, "city": {"type": "string"}},
        "required": ["unit", "city"],
    },
    "nested_arrays": {
        "type": "object",
        "properties": {
            "matrix": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
                "minItems": 1,
                "maxItems": 2,
            }
        },
        "required": ["matrix"],
    },
    "optional_fields": {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
            "lang": {"type": "string"},
        },
        "required": ["query"],
    },
    "string_formats": {
        "type": "object",
        "properties": {
            "day": {"type": "string", "format": "date"},
            "id": {"type": "string", "format": "uuid"},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["day", "id", "email"],
    },
    "min_items_length": {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 6}, "minItems": 4},
            "code": {"type": "string", "minLength": 3, "maxLength": 5},
        },
        "required": ["tags", "code"],
    },
    "nullable": {
        "type": "object",
        "properties": {"note": {"type": ["string", "null"]}, "count": {"type": ["integer", "null"]}},
        "required": ["note", "count"],
    },
    "additional_properties": {
        "type": "object",
        "properties": {"headers": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 8}}},
        "required": ["headers"],
        "additionalProperties": False,
    },
    # Person.model_json_schema() of a Pydantic model with a nested model and an Optional field
    "pydantic_model": {
        "$defs": {"Address": ADDRESS},
        "properties": {
            "name": {"title": "Name", "type": "string"},
            "address": {"$ref": "#/$defs/Address"},
            "nickname": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Nickname"},
            "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array"},
        },
        "required": ["name", "address"],
        "title": "Person",
        "type": "object",
    },
    # openai.pydantic_function_tool(...): strict, every field required, nullable as anyOf, enums as $defs
    "openai_strict": {
        "$defs": {"Unit": {"enum": ["c", "f"], "title": "Unit", "type": "string"}},
        "properties": {
            "location": {"title": "Location", "type": "string"},
            "unit": {"$ref": "#/$defs/Unit"},
            "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}], "title": "When"},
        },
        "required": ["location", "unit", "when"],
        "title": "GetWeather",
        "type": "object",
        "additionalProperties": False,
    },
    "one_of_objects": {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        "required": ["kind", "r"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        "required": ["kind", "side"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "required": ["shape"],
    },
    "pattern_bool_range": {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "[A-Z]{3}-[0-9]{3}"},
            "confirm": {"type": "boolean"},
            "level": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["sku", "confirm", "level"],
    },
}


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"Takes {name} arguments.",
                                             "parameters": SCHEMAS[name]}}


def validate(name: str, arguments: str) -> None:
    Draft202012Validator(SCHEMAS[name], format_checker=Draft202012Validator.FORMAT_CHECKER).validate(
        json.loads(arguments)
    )


#: A prompt without the tool list: the grammar forces the call anyway, and a short prompt keeps each run
#: to its generation (the built-in templates' tool descriptions are 200-300 tokens to evaluate).
BARE = ChatTemplate("bare ChatML", "<|im_start|>user\n{{ messages[0].content }}<|im_end|>\n<|im_start|>assistant\n", "file")

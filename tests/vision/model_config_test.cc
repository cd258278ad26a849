#include "vision/model_config.h"

#include <gtest/gtest.h>

namespace reel::vision {
namespace {

TEST(ModelConfigTest, DefaultsAreM3) {
  auto c = ParseVisionConfig("{}", "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hidden_size, 1280);
  EXPECT_EQ(c->num_layers, 32);
  EXPECT_EQ(c->head_dim(), 80);
  EXPECT_EQ(c->rope_axis_dims(), 26);
  EXPECT_EQ(c->rope_half(), 39);
  EXPECT_EQ(c->patch_values(), 1176);
  EXPECT_EQ(c->segment_max_pairs, 4);
  EXPECT_EQ(c->projector_hidden_size, 6144);
  EXPECT_EQ(c->text_hidden_size, 6144);
  EXPECT_EQ(c->pixel_factor(), 28);
  EXPECT_EQ(c->hidden_act, Activation::kGeluErf);
}

// The layout of the released checkpoint's config.json (keys Reel does not use left in).
TEST(ModelConfigTest, ReadsTheReleasedLayout) {
  const char* text = R"({
    "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
    "model_type": "minimax_m3_vl", "image_token_index": 200025,
    "multimodal_projector_bias": true, "projector_hidden_act": "gelu",
    "projector_hidden_size": 512, "vision_feature_layer": -1,
    "img_token_compression_config": {"spatial_merge_size": 2, "temporal_patch_size": 2},
    "text_config": {"hidden_size": 256, "num_hidden_layers": 60},
    "vision_config": {"model_type": "clip_vision_model", "hidden_size": 96,
      "num_attention_heads": 3, "num_hidden_layers": 2, "intermediate_size": 192,
      "patch_size": 14, "image_size": 2016, "projection_dim": 6144, "rope_theta": 500.0,
      "hidden_act": "gelu", "layer_norm_eps": 1e-6, "num_channels": 3,
      "vision_segment_max_frames": 2,
      "img_token_compression_config": {"image_token_compression_method": "patch_merge",
                                       "spatial_merge_size": 2, "temporal_patch_size": 2}}})";
  auto c = ParseVisionConfig(text, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hidden_size, 96);
  EXPECT_EQ(c->num_heads, 3);
  EXPECT_EQ(c->head_dim(), 32);
  EXPECT_EQ(c->rope_axis_dims(), 10);  // 2 * ((32 / 3) / 2)
  EXPECT_EQ(c->num_layers, 2);
  EXPECT_EQ(c->intermediate_size, 192);
  EXPECT_DOUBLE_EQ(c->rope_theta, 500);
  EXPECT_DOUBLE_EQ(c->layer_norm_eps, 1e-6);
  EXPECT_EQ(c->segment_max_pairs, 2);
  EXPECT_EQ(c->projector_hidden_size, 512);
  EXPECT_EQ(c->text_hidden_size, 256);
}

TEST(ModelConfigTest, ProjectorWidthFallsBackToTextWidth) {
  auto c = ParseVisionConfig(R"({"text_config": {"hidden_size": 320}})", "c.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->projector_hidden_size, 320);
}

TEST(ModelConfigTest, TransformersPortLayout) {
  auto c = ParseVisionConfig(R"({"vision_config": {"spatial_merge_size": 3,
      "temporal_patch_size": 1, "rope_parameters": {"rope_theta": 123.0}}})",
                             "c.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->spatial_merge_size, 3);
  EXPECT_EQ(c->temporal_patch_size, 1);
  EXPECT_DOUBLE_EQ(c->rope_theta, 123);
}

TEST(ModelConfigTest, RoundTripsItsOwnJson) {
  VisionModelConfig config;
  config.hidden_size = 64;
  config.num_heads = 2;
  config.num_layers = 3;
  config.intermediate_size = 128;
  config.projector_hidden_size = 96;
  config.text_hidden_size = 48;
  config.segment_max_pairs = 3;
  config.hidden_act = Activation::kGeluTanh;
  auto back = ParseVisionConfig(VisionConfigJson(config), "c.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->hidden_size, 64);
  EXPECT_EQ(back->num_heads, 2);
  EXPECT_EQ(back->num_layers, 3);
  EXPECT_EQ(back->intermediate_size, 128);
  EXPECT_EQ(back->projector_hidden_size, 96);
  EXPECT_EQ(back->text_hidden_size, 48);
  EXPECT_EQ(back->segment_max_pairs, 3);
  EXPECT_EQ(back->hidden_act, Activation::kGeluTanh);
}

TEST(ModelConfigTest, RejectsBadValues) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {"[1]", "c.json: not a JSON object"},
      {"{", "c.json: not valid JSON"},
      {R"({"vision_config": 3})", "vision_config must be an object"},
      {R"({"vision_config": {"hidden_size": "big"}})",
       "vision_config.hidden_size must be an integer"},
      {R"({"vision_config": {"hidden_size": 1.5}})", "must be an integer"},
      {R"({"vision_config": {"hidden_size": 99999999999}})", "must be an integer"},
      {R"({"vision_config": {"hidden_size": 0}})", "vision_config.hidden_size is 0"},
      {R"({"vision_config": {"hidden_size": 100, "num_attention_heads": 16}})",
       "not a multiple of num_attention_heads"},
      {R"({"vision_config": {"hidden_size": 8, "num_attention_heads": 2}})",
       "leaves no rotary dimensions"},
      {R"({"vision_config": {"hidden_act": "relu"}})", "vision_config.hidden_act 'relu' is not"},
      {R"({"multimodal_projector_bias": 1})", "multimodal_projector_bias must be true or false"},
      {R"({"vision_config": {"layer_norm_eps": -1}})", "layer_norm_eps must be > 0"},
  };
  for (const Case& c : cases) {
    auto result = ParseVisionConfig(c.json, "c.json");
    ASSERT_FALSE(result.ok()) << c.json;
    EXPECT_NE(result.status().message().find(c.message), std::string::npos)
        << c.json << " -> " << result.status().message();
  }
}

}  // namespace
}  // namespace reel::vision
